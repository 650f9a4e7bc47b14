import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';

/**
 * Standard Webhooks signing secrets, at most two live per sending client (one more during a
 * rotation). The secret itself is stored encrypted (AES-256-GCM under WEBHOOK_SECRET_KEY), never in
 * clear: it must be usable for HMAC, so it cannot be hashed. The unique (client_id, slot) keeps
 * two concurrent `clients:webhook-secret` runs from storing a third.
 */
export class CreateWebhookSigningSecrets1763800010000 implements MigrationInterface {
  name = 'CreateWebhookSigningSecrets1763800010000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'webhook_signing_secrets',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'client_id', type: 'varchar', length: '36' },
          { name: 'slot', type: 'smallint' },
          { name: 'encrypted_secret', type: 'varchar', length: '255' },
          { name: 'created_at', type: 'bigint' },
        ],
      }),
    );
    await queryRunner.createIndex(
      'webhook_signing_secrets',
      new TableIndex({
        name: 'IDX_webhook_signing_secrets_client_slot',
        columnNames: ['client_id', 'slot'],
        isUnique: true,
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex(
      'webhook_signing_secrets',
      'IDX_webhook_signing_secrets_client_slot',
    );
    await queryRunner.dropTable('webhook_signing_secrets');
  }
}
