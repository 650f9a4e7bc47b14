import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';

export class CreateOAuthRevokedTokens1763800001002 implements MigrationInterface {
  name = 'CreateOAuthRevokedTokens1763800001002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'oauth_revoked_tokens',
        columns: [
          { name: 'jti', type: 'varchar', length: '64', isPrimary: true },
          { name: 'client_id', type: 'varchar', length: '36' },
          { name: 'expires_at', type: 'bigint' },
          { name: 'revoked_at', type: 'bigint' },
        ],
      }),
    );
    // The periodic reload reads, and the cleanup deletes, by expiry.
    await queryRunner.createIndex(
      'oauth_revoked_tokens',
      new TableIndex({ name: 'IDX_oauth_revoked_tokens_expires_at', columnNames: ['expires_at'] }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('oauth_revoked_tokens', 'IDX_oauth_revoked_tokens_expires_at');
    await queryRunner.dropTable('oauth_revoked_tokens');
  }
}
