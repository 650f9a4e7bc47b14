import { plainToInstance } from 'class-transformer';
import { validate, validateSync, type ValidatorOptions } from 'class-validator';
import type { FieldErrors } from '../common/exceptions/api.exception.js';
import { splitUnknownFields } from '../common/pipes/dto-fields.js';
import { isFlatDto, toFieldErrors } from '../common/pipes/validation.pipe.js';
import type { WebhookDefinition } from './webhook-registry.js';

export type PayloadCheck<P> = { payload: P; errors?: undefined } | { errors: FieldErrors };

const PAYLOAD_OPTIONS: ValidatorOptions = {
  whitelist: false,
  forbidUnknownValues: false,
  // The target is kept to find each field's rules in written order (toFieldErrors()); it is not
  // reported.
  validationError: { target: true, value: false },
};

/**
 * Validates a payload with its event's DTO. Unknown fields are neither refused nor stripped
 * (senders add fields; docs/contract.md §6): the global pipe's whitelist does not apply here. One
 * message per invalid field, under `payload.<field>`: the first rule it breaks in the order the
 * decorators are written, as the global pipe reports a body's fields (toFieldErrors()).
 *
 * A flat payload DTO (isFlatDto()) takes the synchronous path, without class-transformer: the
 * general one cost a delivery 5 % of its instructions (docs/benchmarks.md).
 */
export async function checkPayload<P extends object>(
  definition: WebhookDefinition<P>,
  raw: Record<string, unknown>,
): Promise<PayloadCheck<P>> {
  // Only the declared fields reach the DTO instance: an own `constructor` key would hide the
  // instance's class from class-validator, which would then check nothing.
  const known = splitUnknownFields(definition.payload, raw).known;
  let payload: P;
  let errors;
  if (isFlatDto(definition.payload)) {
    payload = Object.assign(new definition.payload(), known);
    errors = validateSync(payload, PAYLOAD_OPTIONS);
  } else {
    payload = plainToInstance(definition.payload, known);
    errors = await validate(payload, PAYLOAD_OPTIONS);
  }
  if (!errors.length) return { payload };
  return { errors: toFieldErrors(errors, 'payload') };
}
