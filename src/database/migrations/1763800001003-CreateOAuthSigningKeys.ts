import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';

export class CreateOAuthSigningKeys1763800001003 implements MigrationInterface {
  name = 'CreateOAuthSigningKeys1763800001003';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'oauth_signing_keys',
        columns: [
          { name: 'kid', type: 'varchar', length: '64', isPrimary: true },
          { name: 'alg', type: 'varchar', length: '16' },
          { name: 'private_key', type: 'text' },
          { name: 'slot', type: 'varchar', length: '16', isNullable: true },
          { name: 'created_at', type: 'bigint' },
        ],
      }),
    );
    // One signing key per database, even when several instances generate one at first start.
    await queryRunner.createIndex(
      'oauth_signing_keys',
      new TableIndex({
        name: 'IDX_oauth_signing_keys_slot',
        columnNames: ['slot'],
        isUnique: true,
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('oauth_signing_keys', 'IDX_oauth_signing_keys_slot');
    await queryRunner.dropTable('oauth_signing_keys');
  }
}
