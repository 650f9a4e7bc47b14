import { Column, Entity, PrimaryColumn, type ValueTransformer } from 'typeorm';

/** Ids are validated as safe integers; PostgreSQL hands bigint back as a string. */
const bigintAsNumber: ValueTransformer = {
  to: (value: number) => value,
  from: (value: string | number | null) => (value === null ? null : Number(value)),
};

/** A learning attempt another platform reported as completed (learning.attempt.completed). */
@Entity({ name: 'completed_attempts' })
export class CompletedAttempt {
  @PrimaryColumn({ name: 'attempt_id', type: 'bigint', transformer: bigintAsNumber })
  attemptId: number;

  @Column({ name: 'user_id', type: 'bigint', transformer: bigintAsNumber })
  userId: number;

  @Column({ name: 'module_id', type: 'bigint', transformer: bigintAsNumber })
  moduleId: number;

  @Column({ name: 'recorded_at', type: Date })
  recordedAt: Date;
}
