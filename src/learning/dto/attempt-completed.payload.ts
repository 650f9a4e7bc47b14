import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsInt, Max, Min } from 'class-validator';

/**
 * A required id: a JSON number that is a positive safe integer ("5" is refused). The decorators
 * are applied as a stack written in this order would be (last first), so that a payload error
 * reports the first rule listed here that the value breaks (Nest's applyDecorators() applies them
 * first to last).
 */
function PositiveId(field: string, description: string): PropertyDecorator {
  const message = `The ${field} must be a positive integer.`;
  const written = [
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
    Max(Number.MAX_SAFE_INTEGER, { message }),
  ];
  return (target, property) => {
    for (const decorator of [...written].reverse()) decorator(target, property);
  };
}

/** Payload of learning.attempt.completed (SPEC "Events"). Other fields are accepted and kept. */
export class AttemptCompletedPayload {
  @PositiveId('user_id', 'ID of the user who completed the attempt.')
  user_id: number;

  @PositiveId('module_id', 'ID of the module that had the attempt completed.')
  module_id: number;

  @PositiveId('attempt_id', 'ID of the attempt record created.')
  attempt_id: number;
}
