import type { MigrationInterface, QueryRunner } from 'typeorm';
import { addTruncateCountsV2, dropTruncateCountsV2 } from '../frozen/list-counts-v2.js';

/**
 * PostgreSQL: a TRUNCATE of a counted table empties its counts too (it runs none of the triggers
 * that keep them), for the two lists counted before list-counts-v2: customers and webhook events.
 */
export class CountTruncates1763800013000 implements MigrationInterface {
  name = 'CountTruncates1763800013000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const list of LISTS) await addTruncateCountsV2(queryRunner, list);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const list of LISTS) await dropTruncateCountsV2(queryRunner, list);
  }
}

const LISTS = [
  { table: 'customers', key: 'id' },
  { table: 'webhook_events', key: 'seq', counts: 'webhook_event', appendChanges: true },
];
