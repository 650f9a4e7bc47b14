import { applyDecorators } from '@nestjs/common';
import { Transform, Type } from 'class-transformer';
import { ValidateNested } from 'class-validator';
import { declareNested } from '../pipes/dto-fields.js';

/**
 * A nested object validated by its own class, refused with ONE message when it is not an object.
 * IsObject beside ValidateNested would add class-validator's own second message for a string,
 * and ValidateNested alone would validate an array element by element (errors under `x.0`,
 * or none at all for an array of objects).
 */
export function NestedObject(type: () => new () => object, message: string) {
  return applyDecorators(
    // An array becomes a plain value, which ValidateNested refuses with `message` as a whole.
    Transform(({ value }: { value: unknown }) => (Array.isArray(value) ? 'array' : value), {
      toClassOnly: true,
    }),
    ValidateNested({ message }),
    Type(type),
    // Read by the own-property whitelist check (dto-fields.ts) and the OpenAPI document.
    (target: object, key: string | symbol) => declareNested(target, key, type),
  );
}
