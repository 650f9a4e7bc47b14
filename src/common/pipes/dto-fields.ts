import type { Type } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import type { FieldErrors } from '../exceptions/api.exception.js';

/**
 * Which fields a DTO declares, looked up by own property only: a key named like an
 * `Object.prototype` member (`toString`, `constructor`, `hasOwnProperty`…) is an unknown field
 * like any other, never mistaken for one the DTO has (CONTRACT §2).
 */

/** Metadata key of a nested DTO's class, set by @NestedObject(). */
export const NESTED_TYPE = Symbol('nested-type');

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

/** Both maps in one; where both name a path, the first one's messages are kept. */
export function mergeFieldErrors(first: FieldErrors, second: FieldErrors): FieldErrors {
  return Object.fromEntries(new Map([...Object.entries(second), ...Object.entries(first)]));
}

/**
 * Splits `value` into the part the DTO declares (nested DTOs included) and an error for every
 * other key, under its dotted path.
 */
export function splitUnknownFields(
  metatype: Type,
  value: Record<string, unknown>,
  prefix = '',
): { known: Record<string, unknown>; errors: FieldErrors } {
  const fields = declaredFields(metatype);
  // A plain object, not Object.create(null): its keys are declared property names only (never
  // `__proto__`), and V8 keeps a null-prototype object in dictionary mode, which made copying it
  // onto the DTO instance the slowest line of a webhook's validation (BENCHMARKS.md).
  const known: Record<string, unknown> = {};
  const errors = new Map<string, string[]>();
  for (const key of Object.keys(value)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (!fields.has(key)) {
      errors.set(path, [`The ${path} field is not allowed.`]);
      continue;
    }
    const nested = fields.get(key);
    const child = value[key];
    if (nested && isPlainObject(child)) {
      const inner = splitUnknownFields(nested(), child, path);
      known[key] = inner.known;
      for (const [p, messages] of Object.entries(inner.errors)) errors.set(p, messages);
    } else {
      known[key] = child;
    }
  }
  return { known, errors: Object.fromEntries(errors) };
}

/**
 * An error for every string (value or key) holding a NUL character, under its dotted path:
 * PostgreSQL cannot store one, and no field of this service has a use for it (CONTRACT §2).
 */
export function nulCharacterErrors(value: unknown, prefix: string): FieldErrors {
  const errors = new Map<string, string[]>();
  const visit = (node: unknown, path: string) => {
    if (typeof node === 'string') {
      if (node.includes('\0')) errors.set(path, [`The ${path} must not contain NUL characters.`]);
    } else if (typeof node === 'object' && node !== null) {
      for (const key of Object.keys(node)) {
        const child = path ? `${path}.${key}` : key;
        if (key.includes('\0')) {
          errors.set(child, [`The ${child} field name must not contain NUL characters.`]);
        } else visit((node as Record<string, unknown>)[key], child);
      }
    }
  };
  visit(value, prefix);
  return Object.fromEntries(errors);
}
