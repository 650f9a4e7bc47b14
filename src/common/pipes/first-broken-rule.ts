import type { ValidationError } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';

/** Per class, per property: its rules' names, in the order their decorators are written. */
const writtenOrders = new WeakMap<object, Map<string, string[]>>();

/**
 * The one rule of a field's error that is reported: the first it breaks in the order the
 * decorators are written (a missing field's "required" before its type, a type error before a
 * length error). class-validator reports every broken rule, or with `stopAtFirstError` the first
 * one it ran: decorators run bottom-up, so that would be the last one written. Needs the error's
 * `target` (validationError.target: true) to find the field's rules; without it, the first one
 * class-validator ran. Undefined when the error breaks no rule itself (only its children do).
 */
export function firstBrokenRule(error: ValidationError): string | undefined {
  const broken = error.constraints ? Object.keys(error.constraints) : [];
  if (broken.length < 2) return broken[0];
  const order = writtenOrder(error.target, error.property);
  return order.find((rule) => broken.includes(rule)) ?? broken[0];
}

/**
 * The names of `property`'s rules on `target`'s class, in written order. class-validator keeps
 * them in the order the decorators ran, which is bottom-up for stacked decorators: reversed.
 * Looked up once per class and property (and through the cached rule lookups: rule-lookups.ts).
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
