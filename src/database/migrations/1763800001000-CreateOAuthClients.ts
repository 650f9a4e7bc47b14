import { MigrationInterface, QueryRunner, Table } from 'typeorm';

export class CreateOAuthClients1763800001000 implements MigrationInterface {
  name = 'CreateOAuthClients1763800001000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'oauth_clients',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'name', type: 'varchar', length: '255' },
          { name: 'secret_hash', type: 'varchar', length: '128' },
          { name: 'grants', type: 'varchar', length: '255' },
          { name: 'scopes', type: 'varchar', length: '255' },
          { name: 'disabled', type: 'boolean' },
          { name: 'tokens_not_before', type: 'bigint', isNullable: true },
          { name: 'created_at', type: 'bigint' },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('oauth_clients');
  }
}
