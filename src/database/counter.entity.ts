import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * The `counters` table of the first migrations (superseded by position counts: nothing in the
 * service reads it any more).
 */
@Entity({ name: 'counters' })
export class Counter {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  name: string;

  @Column({ type: 'integer', default: 0 })
  value: number;
}
