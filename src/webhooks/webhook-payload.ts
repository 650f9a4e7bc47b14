import type { ValidationError } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validate, validateSync, type ValidatorOptions } from 'class-validator';
import type { FieldErrors } from '../common/exceptions/api.exception.js';
import { splitUnknownFields } from '../common/pipes/dto-fields.js';
import { isFlatDto, toFieldErrors } from '../common/pipes/validation.pipe.js';
import type { WebhookDefinition } from './webhook-registry.js';

export type PayloadCheck<P> = { payload: P; errors?: undefined } | { errors: FieldErrors };

const PAYLOAD_OPTIONS: ValidatorOptions = {
  whitelist: false,
  forbidUnknownValues: false,
  // The target is kept to find each field's rules (firstBrokenRules()); it is not reported.
  validationError: { target: true, value: false },
};

/**
 * Validates a payload with its event's DTO. Unknown fields are neither refused nor stripped
 * (senders add fields; docs/contract.md §6): the global pipe's whitelist does not apply here. One
 * message per invalid field, under `payload.<field>`: the first rule it breaks in the order the
 * decorators are written (firstBrokenRules()).
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
  firstBrokenRules(errors);
  return { errors: toFieldErrors(errors, 'payload') };
}

/** Per class, per property: its rules' names, in the order their decorators are written. */
const writtenOrders = new WeakMap<object, Map<string, string[]>>();

/**
 * Keeps, for each field, only the first rule it breaks in the order the decorators are written
 * (a type error before a length error), nested fields included. class-validator reports every
 * broken rule, or with `stopAtFirstError` the first one it ran: decorators run bottom-up, so that
 * would be the last one written.
 */
function firstBrokenRules(errors: ValidationError[]): void {
  for (const error of errors) {
    const broken = error.constraints ? Object.keys(error.constraints) : [];
    if (broken.length > 1) {
      const order = writtenOrder(error.target, error.property);
      const first = order.find((rule) => broken.includes(rule)) ?? broken[0];
      error.constraints = { [first]: error.constraints![first] };
    }
    delete error.target;
    if (error.children?.length) firstBrokenRules(error.children);
  }
}

/**
 * The names of `property`'s rules on `target`'s class, in written order. class-validator keeps
 * them in the order the decorators ran, which is bottom-up for stacked decorators: reversed.
 */
function writtenOrder(target: object | undefined, property: string): string[] {
  const type = target?.constructor;
  if (!type) return [];
  let byProperty = writtenOrders.get(type);
  if (!byProperty) writtenOrders.set(type, (byProperty = new Map()));
  let order = byProperty.get(property);
  if (!order) {
    const storage = getMetadataStorage();
    order = storage
      .getTargetValidationMetadatas(type, '', true, false)
      .filter((rule) => rule.propertyName === property)
      .map((rule) =>
        rule.constraintCls
          ? (storage.getTargetValidatorConstraints(rule.constraintCls)[0]?.name ?? rule.type)
          : rule.type,
      )
      .reverse();
    byProperty.set(property, order);
  }
  return order;
}
