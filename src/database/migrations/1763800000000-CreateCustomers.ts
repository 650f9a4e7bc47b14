import { MigrationInterface, QueryRunner, Table } from 'typeorm';

export class CreateCustomers1763800000000 implements MigrationInterface {
  name = 'CreateCustomers1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'customers',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'company_name', type: 'varchar', length: '255', isNullable: true },
          { name: 'company_type', type: 'varchar', length: '32', isNullable: true },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('customers');
  }
}
