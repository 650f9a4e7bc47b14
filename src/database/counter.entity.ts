import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * Exact row totals kept beside the tables they count by the database's own triggers, in the same
 * transaction as the rows (row-counters.ts): a paged list reads its `total` from here by primary
 * key, because COUNT(*) over a million rows costs more than the whole page budget on PostgreSQL.
 */
@Entity({ name: 'counters' })
export class Counter {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  name: string;

  @Column({ type: 'integer', default: 0 })
  value: number;
}
