import { ValidateBy, ValidationArguments } from 'class-validator';
import { COMPANY_TYPES } from '../company-type.js';

export const NAME_MAX_LENGTH = 255;
const TYPE_LIST = COMPANY_TYPES.join(', ');

// One message per field, naming what is wrong with the value actually sent.

/**
 * A company name: null, or a string of 1–255 characters. Characters are code points, as
 * PostgreSQL's varchar(255) counts them. (A NUL is refused before any field rule runs:
 * dto-fields.ts.)
 */
export const IsCompanyName = (whenMissing = 'The name field is required.') =>
  ValidateBy({
    name: 'isCompanyName',
    validator: {
      validate: (value: unknown) =>
        value === null ||
        (typeof value === 'string' && value.length > 0 && [...value].length <= NAME_MAX_LENGTH),
      defaultMessage: ({ value }: ValidationArguments) => {
        if (value === undefined) return whenMissing;
        if (typeof value !== 'string') return 'The name must be a string or null.';
        return `The name must be between 1 and ${NAME_MAX_LENGTH} characters.`;
      },
    },
  });

/** A company type: one of the nine values (null only where `nullable`). */
export const IsCompanyType = (
  options: { nullable: boolean; whenMissing?: string } = { nullable: false },
) =>
  ValidateBy({
    name: 'isCompanyType',
    validator: {
      validate: (value: unknown) =>
        (options.nullable && value === null) ||
        (typeof value === 'string' && (COMPANY_TYPES as readonly string[]).includes(value)),
      defaultMessage: ({ value }: ValidationArguments) => {
        if (value === undefined) return options.whenMissing ?? 'The type field is required.';
        if (value === null) return `The type must not be null; it must be one of: ${TYPE_LIST}.`;
        return `The type must be one of: ${TYPE_LIST}.`;
      },
    },
  });
