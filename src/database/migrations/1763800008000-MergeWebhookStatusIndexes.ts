import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One index on webhook events by status instead of two: `(status, last_attempt_at, id)` serves
 * retention (what is due, oldest attempt first) and `webhooks:replay --failed` (failed events in
 * that order, resumed after the last one by row comparison), which had `(status, id)` to itself.
 * Every delivery wrote both; one index fewer is one B-tree insert fewer per event and one page
 * fewer per commit.
 */
export class MergeWebhookStatusIndexes1763800008000 implements MigrationInterface {
  name = 'MergeWebhookStatusIndexes1763800008000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX "IDX_webhook_events_status_last_attempt_at_id" ON webhook_events (status, last_attempt_at, id)`,
    );
    await queryRunner.query(`DROP INDEX "IDX_webhook_events_status_last_attempt_at"`);
    await queryRunner.query(`DROP INDEX "IDX_webhook_events_status_id"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX "IDX_webhook_events_status_id" ON webhook_events (status, id)`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_webhook_events_status_last_attempt_at" ON webhook_events (status, last_attempt_at)`,
    );
    await queryRunner.query(`DROP INDEX "IDX_webhook_events_status_last_attempt_at_id"`);
  }
}
