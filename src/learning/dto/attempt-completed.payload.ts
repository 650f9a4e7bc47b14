import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsInt, Max, Min } from 'class-validator';
import { Rules } from '../../common/pipes/rules.decorator.js';

/** A required id: a JSON number that is a positive safe integer ("5" is refused). */
function PositiveId(field: string, description: string): PropertyDecorator {
  const message = `The ${field} must be a positive integer.`;
  return Rules(
    ApiProperty({
      type: 'integer',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description,
      example: 42,
    }),
    IsDefined({ message: `The ${field} field is required.` }),
    IsInt({ message }),
    Min(1, { message }),
    // A larger integer parses as a nearby double (9007199254740993 as …992): refused, not stored
    // as another id.
    Max(Number.MAX_SAFE_INTEGER, {
      message: `The ${field} must be at most 9007199254740991 (2^53 − 1, the largest integer a JSON number holds exactly).`,
    }),
  );
}

/** Payload of learning.attempt.completed (docs/contract.md §6). Other fields are accepted and kept. */
export class AttemptCompletedPayload {
  @PositiveId('user_id', 'ID of the user who completed the attempt.')
  user_id: number;

  @PositiveId('module_id', 'ID of the module that had the attempt completed.')
  module_id: number;

  @PositiveId('attempt_id', 'ID of the attempt record created.')
  attempt_id: number;
}
