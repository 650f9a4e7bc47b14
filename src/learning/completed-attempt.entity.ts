import { Column, Entity, PrimaryColumn, type ValueTransformer } from 'typeorm';

/** Ids are validated as safe integers; PostgreSQL hands bigint back as a string. */
const bigintAsNumber: ValueTransformer = {
  to: (value: number) => value,
  from: (value: string | number | null) => (value === null ? null : Number(value)),
};

/**
 * A learning attempt another platform reported as completed (learning.attempt.completed), once
 * per sending client: attempt ids are the sender's own numbering.
 */
@Entity({ name: 'completed_attempts' })
export class CompletedAttempt {
  /** The OAuth client that reported it ('' for one recorded before senders were). */
  @PrimaryColumn({ name: 'client_id', type: 'varchar', length: 64, default: '' })
  clientId: string;

  @PrimaryColumn({ name: 'attempt_id', type: 'bigint', transformer: bigintAsNumber })
  attemptId: number;

  @Column({ name: 'user_id', type: 'bigint', transformer: bigintAsNumber })
  userId: number;

  @Column({ name: 'module_id', type: 'bigint', transformer: bigintAsNumber })
  moduleId: number;

  @Column({ name: 'recorded_at', type: Date })
  recordedAt: Date;
}
