import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';

/**
 * Key rotation (CONTRACT §3): a retired key stays in the table (its row says when it was
 * retired) but no longer verifies tokens. Existing keys are all active: the column starts null.
 */
export class AddOAuthSigningKeyRetiredAt1763800001100 implements MigrationInterface {
  name = 'AddOAuthSigningKeyRetiredAt1763800001100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'oauth_signing_keys',
      new TableColumn({ name: 'retired_at', type: 'bigint', isNullable: true }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('oauth_signing_keys', 'retired_at');
  }
}
