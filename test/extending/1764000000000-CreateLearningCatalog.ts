import { type MigrationInterface, type QueryRunner, Table } from 'typeorm';
import { createListCountsV1, dropListCountsV1 } from '../../src/database/frozen/list-counts-v1.js';

/**
 * The modules senders publish (learning.module.published), and the counts that page each
 * client's completed attempts (GET /v2/learning/attempts). No SQL by hand: the table through
 * TypeORM's schema API, the counts and their triggers (both databases) through the frozen helper.
 */
export class CreateLearningCatalog1764000000000 implements MigrationInterface {
  name = 'CreateLearningCatalog1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'published_learning_modules',
        columns: [
          { name: 'client_id', type: 'varchar', length: '64', isPrimary: true },
          { name: 'module_id', type: 'bigint', isPrimary: true },
          { name: 'title', type: 'varchar', length: '200' },
        ],
      }),
    );
    await createListCountsV1(queryRunner, ATTEMPT_COUNTS);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropListCountsV1(queryRunner, ATTEMPT_COUNTS);
    await queryRunner.dropTable('published_learning_modules');
  }
}

/** As completedAttemptsList declares the list: by attempt id, per client; webhooks write it. */
const ATTEMPT_COUNTS = {
  table: 'completed_attempts',
  key: 'attempt_id',
  columns: ['client_id'],
  appendChanges: true,
};
