import type { Type } from '@nestjs/common';
import {
  IsDefined,
  IsOptional,
  IsString,
  ValidateIf,
  type ValidationArguments,
} from 'class-validator';
import { type FieldErrors, ValidationFailedException } from '../exceptions/api.exception.js';
import { repeatedKeys } from '../parsers/body-parsers.js';
import { declaredFields, unstorableTextErrors } from './dto-fields.js';
import { Rules } from './rules.decorator.js';

/**
 * RFC 6749's request parameters (the /oauth endpoints' bodies, JSON or form), validated by the
 * global pipe like any DTO but read by §3.1's rules instead of the contract's: unknown parameters
 * ignored, an empty value as omitted, a repeated one refused. Every rule of those parameters is
 * here; asOAuthError() (oauth-routes.ts) answers a refusal as 400 invalid_request naming one
 * problem (firstProblem()).
 */

/** Metadata key of a DTO of RFC 6749 parameters (@OAuthParameters()). */
const OAUTH_PARAMETERS = Symbol('oauth-parameters');

/** The DTO is a body of RFC 6749 parameters: the global pipe reads it by readOAuthParameters(). */
export const OAuthParameters = (): ClassDecorator => (target) =>
  Reflect.defineMetadata(OAUTH_PARAMETERS, true, target);

export const readsOAuthParameters = (metatype: Type): boolean =>
  Reflect.getMetadata(OAUTH_PARAMETERS, metatype) === true;

const required = (name: string) => `The ${name} parameter is required.`;
const mustBeString = ({ property }: ValidationArguments) =>
  `The ${property} parameter must be a string.`;
const isRequired = ({ property }: ValidationArguments) => required(property);

/**
 * The parameters `metatype` declares, read from an OAuth request body (JSON or form). No body, or
 * JSON `null`, is no parameters (the handler names what is missing); an empty value counts as
 * omitted, unknown parameters are ignored, and a repeated one (a key the form or JSON parser saw
 * twice) is refused before any rule runs.
 */
export function readOAuthParameters(metatype: Type, body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new ValidationFailedException({
      body: ['The request body must be a JSON object or a form.'],
    });
  }
  const repeated = repeatedKeys(body);
  const params: Record<string, unknown> = {};
  for (const name of declaredFields(metatype).keys()) {
    const value = Object.hasOwn(body, name) ? (body as Record<string, unknown>)[name] : undefined;
    // A JSON array is one value of the wrong type ("must be a string", below), not a repeat.
    if (repeated.has(name)) {
      throw new ValidationFailedException({
        [name]: [`The ${name} parameter must not be repeated.`],
      });
    }
    if (value !== undefined && value !== null && value !== '') params[name] = value;
  }
  // A NUL or an unpaired surrogate is refused as in every body (CONTRACT §2), not taken for a
  // wrong credential or an unknown grant.
  const unstorable = unstorableTextErrors(params, '');
  if (Object.keys(unstorable).length > 0) throw new ValidationFailedException(unstorable);
  return params;
}

/**
 * The one error_description of a refusal (§5.2) from the pipe's errors: a parameter sent wrongly
 * is named before one left out, each in the order the DTO declares them.
 */
export function firstProblem(errors: FieldErrors): string | undefined {
  const entries = Object.entries(errors);
  const wrong = entries.find(([name, messages]) => !messages.includes(required(name)));
  return (wrong ?? entries[0])?.[1][0];
}

/** An RFC 6749 parameter of a DTO that a request may leave out: a string when sent. */
export const OptionalParameter = () => Rules(IsOptional(), IsString({ message: mustBeString }));

/**
 * An RFC 6749 parameter of a DTO that a request must carry: a string. With `when`, only the
 * requests for which it holds must carry it (e.g. the password grant's username); the others may.
 * A missing parameter reports "required" alone, the first rule listed that it breaks.
 */
export const RequiredParameter = <T extends object>(when?: (params: T) => boolean) =>
  Rules(
    ...(when ? [ValidateIf((params: T, value) => value !== undefined || when(params))] : []),
    IsDefined({ message: isRequired }),
    IsString({ message: mustBeString }),
  );
