import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';

export class CreateOAuthUsers1763800001001 implements MigrationInterface {
  name = 'CreateOAuthUsers1763800001001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'oauth_users',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'username', type: 'varchar', length: '255' },
          { name: 'password_hash', type: 'varchar', length: '255' },
          { name: 'created_at', type: 'bigint' },
        ],
      }),
    );
    await queryRunner.createIndex(
      'oauth_users',
      new TableIndex({
        name: 'IDX_oauth_users_username',
        columnNames: ['username'],
        isUnique: true,
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('oauth_users', 'IDX_oauth_users_username');
    await queryRunner.dropTable('oauth_users');
  }
}
