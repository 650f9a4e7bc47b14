import { isISO8601, isRFC3339, ValidateBy, type ValidationOptions } from 'class-validator';

/**
 * A point in time sent as text: a date and time with its offset (RFC 3339) on a real day, up to
 * the UTC year 9999. `new Date(value)` reads it alike in any `TZ`, and both databases store it
 * alike: `@IsISO8601()` alone also takes `2025-11-22T10:57` (read in the process's zone),
 * `2025-W47-6` (an invalid Date) and February 30, and an offset can carry 9999-12-31 into a
 * year 10000 that SQLite and PostgreSQL store differently. One rule, so one message.
 */
export function IsDateTime(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isDateTime',
      validator: {
        validate: (value: unknown) => {
          if (typeof value !== 'string' || !isRFC3339(value)) return false;
          if (!isISO8601(value, { strict: true })) return false;
          return new Date(value).getUTCFullYear() <= 9999;
        },
        defaultMessage: () =>
          '$property must be a date and time with its offset, such as 2026-11-29T12:00:00Z.',
      },
    },
    options,
  );
}
