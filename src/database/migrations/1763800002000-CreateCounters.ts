import { MigrationInterface, QueryRunner, Table } from 'typeorm';

export class CreateCounters1763800002000 implements MigrationInterface {
  name = 'CreateCounters1763800002000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'counters',
        columns: [
          { name: 'name', type: 'varchar', length: '64', isPrimary: true },
          { name: 'value', type: 'integer', default: 0 },
        ],
      }),
    );
    // Starts from the rows already there, so the counter is exact from its first day.
    await queryRunner.query(
      `INSERT INTO counters (name, value) SELECT 'customers', COUNT(*) FROM customers`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('counters');
  }
}
