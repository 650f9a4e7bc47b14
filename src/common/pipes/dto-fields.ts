import type { Type } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { type FieldErrors, ValidationFailedException } from '../exceptions/api.exception.js';

/**
 * Which fields a DTO declares, looked up by own property only: a key named like an
 * `Object.prototype` member (`toString`, `constructor`, `hasOwnProperty`…) is an unknown field
 * like any other, never mistaken for one the DTO has (CONTRACT §2).
 */

/** Metadata key of a nested DTO's class, set by @NestedObject() (declareNested()). */
const NESTED_TYPE = Symbol('nested-type');

/** Every class with a nested DTO field: the OpenAPI document closes those DTOs' schemas too. */
const holdersOfNested = new Set<Type>();

/** Records that `key` of `target`'s class holds a nested DTO of class `type()`. */
export function declareNested(target: object, key: string | symbol, type: () => Type): void {
  Reflect.defineMetadata(NESTED_TYPE, type, target, key);
  holdersOfNested.add(target.constructor as Type);
}

/** The classes that declared a nested DTO field (declareNested()). */
export const classesWithNestedFields = (): ReadonlySet<Type> => holdersOfNested;

/** A declared field, and the class of its nested DTO when @NestedObject() gave one. */
type DeclaredFields = ReadonlyMap<string, (() => Type) | undefined>;

const fieldsOf = new WeakMap<Type, DeclaredFields>();

/** The fields a DTO class declares (every property that has a class-validator rule). */
export function declaredFields(metatype: Type): DeclaredFields {
  let fields = fieldsOf.get(metatype);
  if (!fields) {
    const rules = getMetadataStorage().getTargetValidationMetadatas(metatype, '', true, false);
    fields = new Map(
      rules.map(({ propertyName }) => [
        propertyName,
        Reflect.getMetadata(NESTED_TYPE, metatype.prototype, propertyName) as
          (() => Type) | undefined,
      ]),
    );
    fieldsOf.set(metatype, fields);
  }
  return fields;
}

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A request body as the object its fields are read from. No body at all (no bytes, or no
 * Content-Type) is `{}`, so that the route names the fields it misses (CONTRACT §5: "an empty
 * body names both name and type"); anything but a JSON object is refused.
 */
export function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (!isPlainObject(body)) {
    throw new ValidationFailedException({ body: ['The request body must be a JSON object.'] });
  }
  return body;
}

/** The errors of a valid value: shared, so that a valid request allocates none. */
export const NO_FIELD_ERRORS: FieldErrors = Object.freeze({});

const asFieldErrors = (errors: Map<string, string[]> | undefined): FieldErrors =>
  errors ? Object.fromEntries(errors) : NO_FIELD_ERRORS;

/** Both maps in one; where both name a path, the first one's messages are kept. */
export function mergeFieldErrors(first: FieldErrors, second: FieldErrors): FieldErrors {
  return Object.fromEntries(new Map([...Object.entries(second), ...Object.entries(first)]));
}

/**
 * Splits `value` into the part the DTO declares (nested DTOs included) and an error for every
 * other key, under its dotted path. For a query (`singleValues`), a declared parameter given more
 * than once (the query parser gathers its values in an array) where the DTO takes one value is
 * refused too: the field's own rule would name a value the caller did send ("The mode must be
 * paginated." for `result_mode[mode]=paginated` twice). A nested DTO given as an array is left to
 * its own rule ("must be an object").
 */
export function splitUnknownFields(
  metatype: Type,
  value: Record<string, unknown>,
  { prefix = '', singleValues = false }: { prefix?: string; singleValues?: boolean } = {},
): { known: Record<string, unknown>; errors: FieldErrors } {
  const fields = declaredFields(metatype);
  // A plain object, not Object.create(null): its keys are declared property names only (never
  // `__proto__`), and V8 keeps a null-prototype object in dictionary mode, which made copying it
  // onto the DTO instance the slowest line of a webhook's validation (docs/benchmarks.md).
  const known: Record<string, unknown> = {};
  let errors: Map<string, string[]> | undefined;
  for (const key of Object.keys(value)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (!fields.has(key)) {
      (errors ??= new Map()).set(path, [`The ${path} field is not allowed.`]);
      continue;
    }
    const nested = fields.get(key);
    const child = value[key];
    if (nested && isPlainObject(child)) {
      const inner = splitUnknownFields(nested(), child, { prefix: path, singleValues });
      known[key] = inner.known;
      for (const [p, messages] of Object.entries(inner.errors)) {
        (errors ??= new Map()).set(p, messages);
      }
      continue;
    }
    known[key] = child;
    if (singleValues && !nested && Array.isArray(child) && !fieldsTakingArrays(metatype).has(key)) {
      // Named as the query string writes it: result_mode[attributes][page].
      const name = path.replace(/\.([^.]+)/g, '[$1]');
      (errors ??= new Map()).set(path, [`The ${name} parameter must be given once.`]);
    }
  }
  return { known, errors: asFieldErrors(errors) };
}

const arrayFieldsOf = new WeakMap<Type, ReadonlySet<string>>();

/** The fields of a DTO whose rules take an array (`{ each: true }`, @IsArray(), @ArrayMinSize()…). */
function fieldsTakingArrays(metatype: Type): ReadonlySet<string> {
  let fields = arrayFieldsOf.get(metatype);
  if (!fields) {
    const rules = getMetadataStorage().getTargetValidationMetadatas(metatype, '', true, false);
    fields = new Set(
      rules
        .filter(({ each, name }) => each || (name !== undefined && /^(isArray|array)/.test(name)))
        .map(({ propertyName }) => propertyName),
    );
    arrayFieldsOf.set(metatype, fields);
  }
  return fields;
}

/** Why a string cannot be stored as it was sent, if it cannot. */
export function unstorable(text: string): string | undefined {
  if (text.includes('\0')) return 'must not contain NUL characters';
  // A UTF-16 surrogate without its pair (JSON's `\ud800` escape): no UTF-8 text can hold one.
  if (!text.isWellFormed()) return 'must not contain unpaired surrogates (\\ud800 to \\udfff)';
  return undefined;
}

/**
 * An error for every string (value or key) that cannot be stored as sent, under its dotted path
 * (CONTRACT §2): a NUL character (PostgreSQL cannot store one, and no field of this service has
 * a use for it) or an unpaired surrogate escape (UTF-8 cannot encode one: it would be stored as
 * U+FFFD).
 */
export function unstorableTextErrors(value: unknown, prefix: string): FieldErrors {
  return asFieldErrors(findUnstorable(value, prefix, undefined));
}

function findUnstorable(
  node: unknown,
  path: string,
  errors: Map<string, string[]> | undefined,
): Map<string, string[]> | undefined {
  if (typeof node === 'string') {
    const problem = unstorable(node);
    if (problem) (errors ??= new Map()).set(path, [`The ${path} ${problem}.`]);
  } else if (Array.isArray(node)) {
    // By index: an array's keys are digits, always storable, and Object.keys() of a long array
    // would make a string of each (11 MB for a 1 MiB body of `[{},{},…]`).
    for (let i = 0; i < node.length; i++) {
      const item: unknown = node[i];
      if (typeof item === 'string' || (typeof item === 'object' && item !== null)) {
        errors = findUnstorable(item, path ? `${path}.${i}` : String(i), errors);
      }
    }
  } else if (typeof node === 'object' && node !== null) {
    for (const key of Object.keys(node)) {
      const child = path ? `${path}.${key}` : key;
      const problem = unstorable(key);
      if (problem) {
        (errors ??= new Map()).set(child, [`The ${child} field name ${problem}.`]);
      } else errors = findUnstorable((node as Record<string, unknown>)[key], child, errors);
    }
  }
  return errors;
}
