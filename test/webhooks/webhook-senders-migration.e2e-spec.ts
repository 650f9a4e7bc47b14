import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, migrations } from '../../src/database/index.js';
import {
  createTestDatabase,
  migratedTo,
  migrationsBefore,
  TestDatabase,
} from '../support/database.js';

// A timestamp both databases read from text.
const OLD_TIME = '2026-01-01 00:00:00.000';
const OLD_MIGRATIONS = migrationsBefore('WebhookSenders1763800004500');

/**
 * The migration that gives webhook events and completed attempts their sending client, run on a
 * database holding rows written before it (by the previous schema, with plain SQL).
 */
describe('migration WebhookSenders1763800004500 on existing rows', () => {
  let database: TestDatabase;
  let db: DataSource;
  beforeEach(async () => {
    database = await createTestDatabase();
    db = await migratedTo(database, 'WebhookSenders1763800004500');
  });
  afterEach(async () => {
    await db.destroy();
    await database.drop();
  });

  const p = (i: number) => (db.options.type === 'postgres' ? `$${i}` : '?');
  const addClient = async (scopes: string) => {
    const id = randomUUID();
    await db.query(
      `INSERT INTO oauth_clients (id, name, secret_hash, grants, scopes, disabled, tokens_not_before, created_at)
       VALUES (${p(1)}, 'c', 'h', 'client_credentials', ${p(2)}, ${db.options.type === 'postgres' ? 'false' : '0'}, NULL, ${p(3)})`,
      [id, scopes, Date.now()],
    );
    return id;
  };
  const addEvent = async (dedupeKey: string) => {
    const id = randomUUID();
    await db.query(
      `INSERT INTO webhook_events (id, event, dedupe_key, payload, status, attempts, last_error, received_at, processed_at)
       VALUES (${p(1)}, 'learning.attempt.completed', ${p(2)}, '{}', 'processed', 1, NULL, ${p(3)}, ${p(4)})`,
      [id, dedupeKey, OLD_TIME, OLD_TIME],
    );
    return id;
  };
  const addAttempt = (attemptId: number) =>
    db.query(
      `INSERT INTO completed_attempts (attempt_id, user_id, module_id, recorded_at) VALUES (${p(1)}, 7, 3, ${p(2)})`,
      [attemptId, OLD_TIME],
    );
  const migrate = async () => {
    const full = new DataSource(buildDataSourceOptions({ url: database.url }));
    await full.initialize();
    try {
      // This one, then the later ones.
      expect((await full.runMigrations()).map((m) => m.name)).toEqual(
        migrations.slice(OLD_MIGRATIONS.length).map((m) => m.name),
      );
    } finally {
      await full.destroy();
    }
  };
  const events = async () =>
    new Map(
      (
        (await db.query('SELECT id, client_id, dedupe_key FROM webhook_events')) as {
          id: string;
          client_id: string;
          dedupe_key: string;
        }[]
      ).map((r) => [r.id, { clientId: r.client_id, dedupeKey: r.dedupe_key }]),
    );
  const attempts = async () =>
    (
      (await db.query(
        'SELECT client_id, attempt_id FROM completed_attempts ORDER BY attempt_id',
      )) as { client_id: string; attempt_id: string | number }[]
    ).map((r) => [r.client_id, Number(r.attempt_id)]);

  it('gives header-keyed events their client back, and the rest to the only client that could send them', async () => {
    const sender = await addClient('webhooks:write webhooks:read');
    await addClient('customers:read');
    const keyed = await addEvent(`sender:${sender}:msg-1`);
    const colons = await addEvent(`sender:${sender}:a:b:c`);
    const natural = await addEvent('natural:5');
    await addAttempt(5);

    await migrate();

    const rows = await events();
    expect(rows.get(keyed)).toEqual({ clientId: sender, dedupeKey: 'sender:msg-1' });
    expect(rows.get(colons)).toEqual({ clientId: sender, dedupeKey: 'sender:a:b:c' });
    expect(rows.get(natural)).toEqual({ clientId: sender, dedupeKey: 'natural:5' });
    expect(await attempts()).toEqual([[sender, 5]]);
  });

  it('with several possible senders, leaves events without a header key unattributed (only the CLI sees them)', async () => {
    const a = await addClient('webhooks:write');
    const b = await addClient('webhooks:write');
    // Two clients once used the same key: two rows that become equal keys of different clients.
    const fromA = await addEvent(`sender:${a}:same`);
    const fromB = await addEvent(`sender:${b}:same`);
    const natural = await addEvent('natural:9');
    await addAttempt(9);

    await migrate();

    const rows = await events();
    expect(rows.get(fromA)).toEqual({ clientId: a, dedupeKey: 'sender:same' });
    expect(rows.get(fromB)).toEqual({ clientId: b, dedupeKey: 'sender:same' });
    expect(rows.get(natural)).toEqual({ clientId: '', dedupeKey: 'natural:9' });
    expect(await attempts()).toEqual([['', 9]]);
  });
});
