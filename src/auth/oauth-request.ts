import {
  applyDecorators,
  ArgumentMetadata,
  createParamDecorator,
  ExecutionContext,
  Injectable,
  ValidationError,
  ValidationPipe,
} from '@nestjs/common';
import {
  IsDefined,
  IsOptional,
  IsString,
  ValidateIf,
  type ValidationArguments,
} from 'class-validator';
import type { FastifyRequest } from 'fastify';
import { repeatedKeys } from '../common/parsers/body-parsers.js';
import { declaredFields } from '../common/pipes/dto-fields.js';
import { InvalidClientException, InvalidRequestException } from './oauth.exceptions.js';

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** Whether HTTP Basic carried them (then a refusal carries a Basic challenge). */
  usedBasic: boolean;
}

/**
 * The request body as the handler's DTO of RFC 6749 parameters, through OAuthParamsPipe. A custom
 * parameter decorator rather than @Body(): the global AppValidationPipe validates bodies by the
 * contract's rules (unknown fields refused, 422), and leaves custom decorators to their own pipes.
 */
export const OAuthParams = (): ParameterDecorator => requestBody(OAuthParamsPipe);

const requestBody = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): unknown =>
    ctx.switchToHttp().getRequest<FastifyRequest>().body,
);

/**
 * Nest's ValidationPipe with RFC 6749's rules instead of the contract's: the parameters the DTO
 * declares are read from the JSON or form body (readParams()), its rules (@RequiredParameter(),
 * @OptionalParameter()) run on them, and a refusal is §5.2's 400 invalid_request naming one
 * problem.
 */
@Injectable()
export class OAuthParamsPipe extends ValidationPipe {
  constructor() {
    super({
      validateCustomDecorators: true,
      transform: true,
      stopAtFirstError: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => new InvalidRequestException(firstProblem(errors)),
    });
  }

  override transform(body: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    return super.transform(readParams(body, declaredFields(metadata.metatype!).keys()), metadata);
  }
}

/** A parameter sent wrongly is named before one left out (one error_description, §5.2). */
function firstProblem(errors: ValidationError[]): string {
  const error = errors.find((e) => !e.constraints?.isDefined) ?? errors[0];
  return Object.values(error.constraints ?? {})[0];
}

/**
 * The parameters named `names` of an OAuth request body (JSON or form). RFC 6749 §3.1: an empty
 * value counts as omitted, unknown parameters are ignored, and a repeated one (an array, from the
 * form parser; a key the JSON parser saw twice) is refused.
 */
function readParams(body: unknown, names: Iterable<string>): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidRequestException('The request body must be a JSON object or a form.');
  }
  const repeated = repeatedKeys(body);
  const params: Record<string, unknown> = {};
  for (const name of names) {
    const value = Object.hasOwn(body, name) ? (body as Record<string, unknown>)[name] : undefined;
    if (repeated.has(name) || Array.isArray(value)) {
      throw new InvalidRequestException(`The ${name} parameter must not be repeated.`);
    }
    if (value !== undefined && value !== null && value !== '') params[name] = value;
  }
  return params;
}

const mustBeString = ({ property }: ValidationArguments) =>
  `The ${property} parameter must be a string.`;
const isRequired = ({ property }: ValidationArguments) => `The ${property} parameter is required.`;

/** An RFC 6749 parameter of a DTO that a request may leave out: a string when sent. */
export const OptionalParameter = () =>
  applyDecorators(IsOptional(), IsString({ message: mustBeString }));

/**
 * An RFC 6749 parameter of a DTO that a request must carry: a string. With `when`, only the
 * requests for which it holds must carry it (e.g. the password grant's username); the others may.
 */
export const RequiredParameter = <T extends object>(when?: (params: T) => boolean) =>
  applyDecorators(
    ...(when ? [ValidateIf((params: T, value) => value !== undefined || when(params))] : []),
    IsDefined({ message: isRequired }),
    IsString({ message: mustBeString }),
  );

/**
 * Client authentication (RFC 6749 §2.3.1): HTTP Basic (`client_secret_basic`) or `client_id` +
 * `client_secret` in the body (`client_secret_post`), never both. `authorizations`: every
 * Authorization header of the request; two are ambiguous, so neither is believed (as on /v2,
 * docs/contract.md §4).
 */
export function readClientCredentials(
  authorizations: readonly string[],
  params: Partial<Record<'client_id' | 'client_secret', string>>,
): ClientCredentials {
  if (authorizations.length > 1) {
    throw new InvalidRequestException(
      'The request must carry one Authorization header, not several.',
    );
  }
  const authorization = authorizations[0];
  if (authorization !== undefined) {
    const basic = parseBasic(authorization);
    if (
      params.client_secret !== undefined ||
      (params.client_id !== undefined && params.client_id !== basic.clientId)
    ) {
      throw new InvalidRequestException(
        'Send the client credentials either with HTTP Basic or in the body, not both.',
      );
    }
    return basic;
  }
  // RFC 6749 §5.2: no client authentication at all is invalid_client, like a wrong one.
  if (params.client_id === undefined || params.client_secret === undefined) {
    throw new InvalidClientException(false);
  }
  return { clientId: params.client_id, clientSecret: params.client_secret, usedBasic: false };
}

function parseBasic(header: string): ClientCredentials {
  const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  // Another scheme, or a malformed Basic header: an unsupported authentication method (§5.2).
  if (!match) throw new InvalidClientException(true);
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) throw new InvalidClientException(true);
  try {
    // RFC 6749 §2.3.1: both halves are form-urlencoded before they are joined.
    const clientId = formDecode(decoded.slice(0, colon));
    const clientSecret = formDecode(decoded.slice(colon + 1));
    if (!clientSecret) throw new InvalidClientException(true);
    return { clientId, clientSecret, usedBasic: true };
  } catch {
    throw new InvalidClientException(true);
  }
}

function formDecode(value: string) {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}
