import { MigrationInterface, QueryRunner, Table } from 'typeorm';

export class CreateCompletedAttempts1763800003010 implements MigrationInterface {
  name = 'CreateCompletedAttempts1763800003010';

  async up(queryRunner: QueryRunner): Promise<void> {
    const timestamp = queryRunner.connection.driver.normalizeType({ type: Date });
    await queryRunner.createTable(
      new Table({
        name: 'completed_attempts',
        columns: [
          // The attempt id is the key: an attempt is recorded once, however often it is reported.
          { name: 'attempt_id', type: 'bigint', isPrimary: true },
          { name: 'user_id', type: 'bigint' },
          { name: 'module_id', type: 'bigint' },
          { name: 'recorded_at', type: timestamp },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('completed_attempts');
  }
}
