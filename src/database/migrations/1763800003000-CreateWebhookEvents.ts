import { MigrationInterface, QueryRunner, Table } from 'typeorm';

export class CreateWebhookEvents1763800003000 implements MigrationInterface {
  name = 'CreateWebhookEvents1763800003000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The entity's portable types (uuid, Date) mean different column types per database
    // (uuid/varchar, timestamp/datetime); the driver says which, so this file runs on both.
    const { driver } = queryRunner.connection;
    const uuid = driver.normalizeType({ type: 'uuid' });
    const timestamp = driver.normalizeType({ type: Date });
    await queryRunner.createTable(
      new Table({
        name: 'webhook_events',
        columns: [
          { name: 'id', type: uuid, isPrimary: true },
          { name: 'event', type: 'varchar', length: '100' },
          { name: 'dedupe_key', type: 'varchar', length: '255' },
          { name: 'payload', type: 'text' },
          { name: 'status', type: 'varchar', length: '16' },
          { name: 'attempts', type: 'integer' },
          { name: 'last_error', type: 'text', isNullable: true },
          { name: 'received_at', type: timestamp },
          { name: 'processed_at', type: timestamp, isNullable: true },
        ],
        uniques: [
          { name: 'UQ_webhook_events_event_dedupe_key', columnNames: ['event', 'dedupe_key'] },
        ],
        indices: [{ name: 'IDX_webhook_events_status_id', columnNames: ['status', 'id'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('webhook_events');
  }
}
