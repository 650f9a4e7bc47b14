import { MigrationInterface, QueryRunner, Table } from 'typeorm';

/**
 * The `counters` table has been unused since CreateListPositions replaced the customers counter
 * with position counts (its triggers were dropped there); nothing reads or writes it.
 */
export class DropCounters1763800012500 implements MigrationInterface {
  name = 'DropCounters1763800012500';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('counters');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'counters',
        columns: [
          { name: 'name', type: 'varchar', length: '64', isPrimary: true },
          { name: 'value', type: 'integer', default: 0 },
        ],
      }),
    );
  }
}
