import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import type { FieldErrors } from '../common/exceptions/api.exception.js';
import { splitUnknownFields } from '../common/pipes/dto-fields.js';
import { toFieldErrors } from '../common/pipes/validation.pipe.js';
import type { WebhookDefinition } from './webhook-registry.js';

export type PayloadCheck<P> = { payload: P; errors?: undefined } | { errors: FieldErrors };

/**
 * Validates a payload with its event's DTO. Unknown fields are neither refused nor stripped
 * (senders add fields; docs/contract.md §6): the global pipe's whitelist does not apply here. One message
 * per field (the first rule it breaks), under `payload.<field>`.
 */
export async function checkPayload<P extends object>(
  definition: WebhookDefinition<P>,
  raw: Record<string, unknown>,
): Promise<PayloadCheck<P>> {
  // Only the declared fields reach the DTO instance: an own `constructor` key would hide the
  // instance's class from class-validator, which would then check nothing.
  const payload = plainToInstance(
    definition.payload,
    splitUnknownFields(definition.payload, raw).known,
  );
  const errors = await validate(payload, {
    whitelist: false,
    forbidUnknownValues: false,
    stopAtFirstError: true,
    validationError: { target: false, value: false },
  });
  return errors.length ? { errors: toFieldErrors(errors, 'payload') } : { payload };
}
