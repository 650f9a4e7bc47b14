import { MigrationInterface, QueryRunner, TableColumn, TableIndex, TableUnique } from 'typeorm';

/**
 * Webhook events and completed attempts belong to the client that sent them (CONTRACT §6):
 * `client_id` on both tables; redeliveries recognised per (client, event, key); an attempt
 * recorded once per (client, attempt_id).
 *
 * Existing rows: a header key was stored as `sender:<client id>:<key>`, so those events get their
 * client back exactly (and the key loses the prefix). Events recognised by their natural key, and
 * completed attempts, never recorded a sender: they are given the one client allowed to send
 * webhooks (scope webhooks:write) when there is exactly one (clients are never deleted, so it sent
 * them all), and otherwise '' (sender unknown: seen by the CLI, by no client). A header key too long
 * for the column was stored hashed together with its client, so a redelivery of such an old event
 * is not recognised (it is processed as new).
 */
export class WebhookSenders1763800004500 implements MigrationInterface {
  name = 'WebhookSenders1763800004500';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sole = await soleWebhookSender(queryRunner);
    const clientId = () =>
      new TableColumn({ name: 'client_id', type: 'varchar', length: '64', default: "''" });

    // webhook_events: the old unique key goes first, since two clients' keys become equal.
    await queryRunner.dropUniqueConstraint('webhook_events', 'UQ_webhook_events_event_dedupe_key');
    await queryRunner.addColumn('webhook_events', clientId());
    const position = queryRunner.connection.driver.options.type === 'postgres' ? 'strpos' : 'instr';
    // 'sender:' is 7 characters; the client id (a UUID, no colon) runs to the next colon.
    const rest = `substr(dedupe_key, 8)`;
    await queryRunner.query(
      `UPDATE webhook_events
          SET client_id = substr(${rest}, 1, ${position}(${rest}, ':') - 1),
              dedupe_key = 'sender:' || substr(${rest}, ${position}(${rest}, ':') + 1)
        WHERE dedupe_key LIKE 'sender:%:%'`,
    );
    if (sole) {
      await queryRunner.query(
        `UPDATE webhook_events SET client_id = ${param(queryRunner, 1)} WHERE client_id = ''`,
        [sole],
      );
    }
    await queryRunner.createUniqueConstraint(
      'webhook_events',
      new TableUnique({
        name: 'UQ_webhook_events_client_event_dedupe_key',
        columnNames: ['client_id', 'event', 'dedupe_key'],
      }),
    );
    // A client's own events, newest first (GET /v2/webhooks).
    await queryRunner.createIndex(
      'webhook_events',
      new TableIndex({ name: 'IDX_webhook_events_client_id_id', columnNames: ['client_id', 'id'] }),
    );

    // completed_attempts: the key becomes (client_id, attempt_id).
    await queryRunner.addColumn('completed_attempts', clientId());
    if (sole) {
      await queryRunner.query(
        `UPDATE completed_attempts SET client_id = ${param(queryRunner, 1)}`,
        [sole],
      );
    }
    await queryRunner.dropPrimaryKey('completed_attempts');
    await queryRunner.createPrimaryKey('completed_attempts', ['client_id', 'attempt_id']);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Only possible while no two clients share an attempt id or a key.
    await queryRunner.dropPrimaryKey('completed_attempts');
    await queryRunner.dropColumn('completed_attempts', 'client_id');
    await queryRunner.createPrimaryKey('completed_attempts', ['attempt_id']);

    await queryRunner.dropIndex('webhook_events', 'IDX_webhook_events_client_id_id');
    await queryRunner.dropUniqueConstraint(
      'webhook_events',
      'UQ_webhook_events_client_event_dedupe_key',
    );
    await queryRunner.query(
      `UPDATE webhook_events SET dedupe_key = 'sender:' || client_id || ':' || substr(dedupe_key, 8)
        WHERE dedupe_key LIKE 'sender:%' AND client_id <> ''`,
    );
    await queryRunner.dropColumn('webhook_events', 'client_id');
    await queryRunner.createUniqueConstraint(
      'webhook_events',
      new TableUnique({
        name: 'UQ_webhook_events_event_dedupe_key',
        columnNames: ['event', 'dedupe_key'],
      }),
    );
  }
}

/** The id of the only client that may send webhooks, or undefined when there is not exactly one. */
async function soleWebhookSender(queryRunner: QueryRunner): Promise<string | undefined> {
  const clients = (await queryRunner.query('SELECT id, scopes FROM oauth_clients')) as {
    id: string;
    scopes: string;
  }[];
  const senders = clients.filter((c) => c.scopes.split(' ').includes('webhooks:write'));
  return senders.length === 1 ? senders[0].id : undefined;
}

function param(queryRunner: QueryRunner, index: number) {
  return queryRunner.connection.driver.options.type === 'postgres' ? `$${index}` : '?';
}
