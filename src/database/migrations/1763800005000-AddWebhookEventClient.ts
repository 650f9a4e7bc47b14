import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';

// PROVISIONAL (lists branch): the sending client of an event; the several-instances work adds
// the real column. Replaced at merge.
export class AddWebhookEventClient1763800005000 implements MigrationInterface {
  name = 'AddWebhookEventClient1763800005000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (await queryRunner.hasColumn('webhook_events', 'client_id')) return;
    await queryRunner.addColumn(
      'webhook_events',
      new TableColumn({ name: 'client_id', type: 'varchar', length: '36', default: "''" }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('webhook_events', 'client_id');
  }
}
