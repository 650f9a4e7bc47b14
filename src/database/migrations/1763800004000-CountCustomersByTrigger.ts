import { MigrationInterface, QueryRunner } from 'typeorm';
import { createRowCounter, dropRowCounter } from '../row-counters.js';

/**
 * The customers counter, kept by the database itself instead of by each insert path (it was
 * incremented by hand until now); recounted here, so it is exact whatever came before.
 */
export class CountCustomersByTrigger1763800004000 implements MigrationInterface {
  name = 'CountCustomersByTrigger1763800004000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await createRowCounter(queryRunner, 'customers');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropRowCounter(queryRunner, 'customers');
    // As before this migration: the row stays, counted by the application.
    await queryRunner.query(
      `INSERT INTO counters (name, value) SELECT 'customers', COUNT(*) FROM customers`,
    );
  }
}
