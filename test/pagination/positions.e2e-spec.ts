import { randomUUID } from 'node:crypto';
import request from 'supertest';
import {
  BLOCKS_PER_SUPERBLOCK,
  Database,
  ListCountsFolder,
  POSITION_BLOCK_SIZE,
} from '../../src/database/index.js';
import { WebhookRetention } from '../../src/webhooks/webhook-retention.service.js';
import { WebhookSeeder } from '../../src/webhooks/webhook-seeder.service.js';
import { createClient, issueToken, type TestClient } from '../factories/client.factory.js';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { startTestApp, TestApp } from '../support/app.js';

const B = POSITION_BLOCK_SIZE;
/** Keys per superblock: rows far apart land in different ones. */
const S = POSITION_BLOCK_SIZE * BLOCKS_PER_SUPERBLOCK;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Paged lists read their totals and page positions from per-block counts the database keeps
 * (src/database/paged-list.ts). Every page of every filter is compared with what COUNT(*) and a
 * plain ORDER BY give, after inserts, status changes and deletes spread over several blocks.
 */
describe('paged lists from maintained block counts (both databases)', () => {
  let t: TestApp;
  let alice: TestClient;
  let bob: TestClient;
  let aliceToken: string;
  let bobToken: string;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await createClient(t);
    bob = await createClient(t);
    aliceToken = `Bearer ${await issueToken(t, alice)}`;
    bobToken = `Bearer ${await issueToken(t, bob)}`;
  });
  afterAll(async () => {
    await t.close();
  });

  const run = (text: string, params: Record<string, unknown> = {}) => {
    const statement = t.app.get(Database).sql(text, params);
    return t.db.query(statement.sql, statement.params) as Promise<Record<string, unknown>[]>;
  };
  /** As both databases store timestamps: UTC 'YYYY-MM-DD HH:MM:SS.SSS'. */
  const stamp = (date: Date) => date.toISOString().replace('T', ' ').replace('Z', '');
  const fold = () => t.app.get(ListCountsFolder).foldAll();
  /** After rows stored with chosen keys, PostgreSQL's sequences go on after the highest. */
  async function syncSequences() {
    if (t.database.kind !== 'postgres') return;
    await run(`SELECT setval(pg_get_serial_sequence('customers', 'id'), MAX(id)) FROM customers`);
    await run(`SELECT setval('webhook_events_seq', MAX(seq)) FROM webhook_events`);
  }

  const pageQuery = (page: number, limit: number) =>
    `result_mode[mode]=paginated&result_mode[attributes][page]=${page}&result_mode[attributes][limit]=${limit}`;

  /** Every page of a list through HTTP: the ids in order, and each page's meta. */
  async function walk(path: string, token: string, filter: Record<string, string>, limit: number) {
    const ids: unknown[] = [];
    const metas: Record<string, unknown>[] = [];
    for (let page = 1; ; page++) {
      const res = await request(t.http)
        .get(path)
        .query(pageQuery(page, limit))
        .query(filter)
        .set('authorization', token)
        .expect(200);
      metas.push(res.body.meta);
      if (res.body.data.length === 0) break;
      ids.push(...res.body.data.map((item: { id: unknown }) => item.id));
    }
    return { ids, metas };
  }

  function expectMetas(metas: Record<string, unknown>[], total: number, limit: number) {
    metas.forEach((meta, i) => {
      const page = i + 1;
      const count = Math.max(0, Math.min(limit, total - (page - 1) * limit));
      expect(meta).toEqual({
        current_page: page,
        from: count ? (page - 1) * limit + 1 : null,
        to: count ? (page - 1) * limit + count : null,
        last_page: Math.max(1, Math.ceil(total / limit)),
        per_page: limit,
        total,
      });
    });
  }

  describe('customers', () => {
    async function expectEveryPage(limit: number) {
      const expected = (await run('SELECT id FROM customers ORDER BY id')).map((r) => Number(r.id));
      const { ids, metas } = await walk('/v2/customers', aliceToken, {}, limit);
      expect(ids).toEqual(expected);
      expectMetas(metas, expected.length, limit);
    }

    it('pages exactly across blocks, after inserts and deletes', async () => {
      // Ids in six blocks of three superblocks, with gaps; then some deleted, one block emptied.
      const ids = [
        ...Array.from({ length: 9 }, (_, i) => i + 1),
        ...Array.from({ length: 7 }, (_, i) => B - 3 + i),
        ...Array.from({ length: 5 }, (_, i) => 3 * B + 10 + i),
        5 * B,
        ...Array.from({ length: 4 }, (_, i) => S - 2 + i),
        2 * S + 3 * B,
      ];
      for (const id of ids) {
        await run(
          `INSERT INTO customers (id, company_name, company_type) VALUES (:id, 'C', 'plc')`,
          {
            id,
          },
        );
      }
      await syncSequences();
      for (const limit of [1, 4, 7, 100]) await expectEveryPage(limit);

      await run('DELETE FROM customers WHERE id IN (:a, :b, :c, :d)', {
        a: 2,
        b: B,
        c: 5 * B,
        d: S,
      });
      for (const limit of [3, 10]) await expectEveryPage(limit);
    });

    it('keeps the total exact under concurrent creates', async () => {
      await Promise.all(
        Array.from({ length: 25 }, () =>
          request(t.http)
            .post('/v2/customers')
            .set('authorization', aliceToken)
            .send({ company: { name: 'Concurrent', type: 'plc' } })
            .expect(201),
        ),
      );
      const [{ n }] = await run('SELECT COUNT(*) AS n FROM customers');
      const res = await request(t.http)
        .get('/v2/customers')
        .set('authorization', aliceToken)
        .expect(200);
      expect(res.body.meta.total).toBe(Number(n));
      await expectEveryPage(9);
    });
  });

  describe('webhook events', () => {
    const EVENTS = ['learning.attempt.completed', 'learning.module.started'];

    /** Stored directly with a chosen seq, so that a few rows span several blocks. */
    async function insertEvent(clientId: string, seq: number, n: number, receivedAt = new Date()) {
      const failed = n % 3 === 0;
      await run(
        `INSERT INTO webhook_events (id, event, client_id, dedupe_key, payload, status, attempts,
           last_error, received_at, processed_at, last_attempt_at, seq)
         VALUES (:id, :event, :client, :key, '{}', :status, 1, NULL, :at, :processed, :at, :seq)`,
        {
          id: randomUUID(),
          event: EVENTS[n % 2],
          client: clientId,
          key: `test:${randomUUID()}`,
          status: failed ? 'failed' : 'processed',
          at: stamp(receivedAt),
          processed: failed ? null : stamp(receivedAt),
          seq,
        },
      );
    }

    const FILTERS: Record<string, string>[] = [
      {},
      { status: 'processed' },
      { status: 'failed' },
      { event: EVENTS[0] },
      { event: EVENTS[1], status: 'failed' },
    ];

    async function expectEveryPage(client: TestClient, token: string, limit: number) {
      for (const filter of FILTERS) {
        const expected = (
          await run(
            `SELECT id FROM webhook_events WHERE client_id = :client
               AND (CAST(:event AS varchar(100)) IS NULL OR event = :event)
               AND (CAST(:status AS varchar(16)) IS NULL OR status = :status)
             ORDER BY seq DESC`,
            { client: client.clientId, event: filter.event ?? null, status: filter.status ?? null },
          )
        ).map((r) => String(r.id));
        const { ids, metas } = await walk('/v2/webhooks', token, filter, limit);
        expect({ filter, ids }).toEqual({ filter, ids: expected });
        expectMetas(metas, expected.length, limit);
      }
    }

    it('pages every filter exactly across blocks, before and after folding the counts', async () => {
      // Over blocks of three superblocks, with gaps.
      const seqs = [1, 2, 3, B - 2, B - 1, B, B + 1, 4 * B + 7, S - 1, S, S + 4 * B, 2 * S + 9 * B];
      for (const [n, seq] of seqs.entries()) await insertEvent(alice.clientId, seq, n);
      for (const [n, seq] of [5, B + 2, 2 * B].entries()) await insertEvent(bob.clientId, seq, n);
      await syncSequences();
      // Through the service: numbered after the highest seq by the database.
      for (let i = 0; i < 3; i++) {
        await request(t.http)
          .post('/v2/webhooks')
          .set('authorization', aliceToken)
          .send(attemptCompleted())
          .expect(200);
      }
      const [{ top }] = await run(
        `SELECT MAX(seq) AS top, MIN(seq) AS bottom FROM webhook_events WHERE client_id = :client`,
        { client: alice.clientId },
      );
      expect(Number(top)).toBe(2 * S + 9 * B + 3);

      for (const limit of [1, 2, 5, 100]) await expectEveryPage(alice, aliceToken, limit);
      await expectEveryPage(bob, bobToken, 2);

      // Status changes and deletes move and remove counts.
      await run(`UPDATE webhook_events SET status = 'processed' WHERE seq IN (:a, :b)`, {
        a: 3,
        b: B,
      });
      await run(`UPDATE webhook_events SET status = 'failed' WHERE seq IN (:a, :b)`, {
        a: B + 1,
        b: S - 1,
      });
      await run('DELETE FROM webhook_events WHERE seq IN (:a, :b, :c, :d)', {
        a: 1,
        b: B - 1,
        c: 2 * S + 9 * B,
        d: S,
      });
      await expectEveryPage(alice, aliceToken, 3);
      await fold();
      await expectEveryPage(alice, aliceToken, 3);
      await expectEveryPage(bob, bobToken, 1);
    });

    it('keeps totals exact under concurrent deliveries, failures and replays', async () => {
      const carol = await createClient(t);
      const token = `Bearer ${await issueToken(t, carol)}`;
      await Promise.all(
        Array.from({ length: 30 }, () =>
          request(t.http)
            .post('/v2/webhooks')
            .set('authorization', token)
            .send(attemptCompleted())
            .expect(200),
        ),
      );
      await expectEveryPage(carol, token, 7);
      await fold();
      await expectEveryPage(carol, token, 7);
    });

    it('seeds events inside the database, numbered after the existing ones', async () => {
      const dave = await createClient(t);
      const token = `Bearer ${await issueToken(t, dave)}`;
      const [{ top }] = await run('SELECT MAX(seq) AS top FROM webhook_events');
      await t.app.get(WebhookSeeder).seed({ count: 40, clientId: dave.clientId, failedEvery: 8 });
      const rows = await run(
        `SELECT status, COUNT(*) AS n, MIN(seq) AS low, MAX(seq) AS high FROM webhook_events
         WHERE client_id = :client GROUP BY status ORDER BY status`,
        { client: dave.clientId },
      );
      expect(rows.map((r) => [r.status, Number(r.n)])).toEqual([
        ['failed', 5],
        ['processed', 35],
      ]);
      expect(Math.min(...rows.map((r) => Number(r.low)))).toBe(Number(top) + 1);
      expect(Math.max(...rows.map((r) => Number(r.high)))).toBe(Number(top) + 40);
      await expectEveryPage(dave, token, 6);
      const item = await request(t.http)
        .get('/v2/webhooks')
        .query({ status: 'failed' })
        .set('authorization', token)
        .expect(200);
      expect(item.body.data[0]).toMatchObject({
        event: 'learning.attempt.completed',
        status: 'failed',
        payload: { user_id: 7, module_id: 3, attempt_id: 40 },
        last_error: 'Seeded failure.',
        processed_at: null,
      });
    });

    it('prunes events past retention in batches, keeping the counts exact', async () => {
      const erin = await createClient(t);
      const token = `Bearer ${await issueToken(t, erin)}`;
      const now = new Date();
      const [{ top }] = await run('SELECT MAX(seq) AS top FROM webhook_events');
      let seq = Number(top) + B; // a block of its own
      // n % 3 === 0 is failed (kept 90 days), the rest processed (kept 30 days by default).
      const ages = [100, 95, 60, 40, 31, 29, 10, 1];
      for (const [n, days] of ages.entries()) {
        await insertEvent(erin.clientId, seq++, n, new Date(now.getTime() - days * DAY_MS));
      }
      await syncSequences();
      const result = await t.app.get(WebhookRetention).prune(now);
      // Gone: failed at 100 days (n 0); processed at 95, 40, 31 days (n 1, 4... see below).
      const left = await run(
        `SELECT status, received_at FROM webhook_events WHERE client_id = :client ORDER BY seq`,
        { client: erin.clientId },
      );
      // n: 0 failed 100d → gone; 1 processed 95d → gone; 2 processed 60d → gone;
      // 3 failed 40d → kept; 4 processed 31d → gone; 5 processed 29d → kept;
      // 6 failed 10d → kept; 7 processed 1d → kept.
      expect(left.map((r) => r.status)).toEqual(['failed', 'processed', 'failed', 'processed']);
      expect(result.deleted).toBeGreaterThanOrEqual(4);
      await expectEveryPage(erin, token, 3);
      await fold();
      await expectEveryPage(erin, token, 3);
    });

    it("records a pruned event's effect once when the event is delivered again (CONTRACT §6)", async () => {
      const gina = await createClient(t);
      const token = `Bearer ${await issueToken(t, gina)}`;
      const delivery = attemptCompleted();
      const first = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', token)
        .send(delivery)
        .expect(200);
      // Processed 40 days ago: past the default retention of 30 days.
      const old = stamp(new Date(Date.now() - 40 * DAY_MS));
      await run(
        `UPDATE webhook_events SET received_at = :old, processed_at = :old, last_attempt_at = :old
         WHERE id = :id`,
        { old, id: first.body.data.id },
      );
      await t.app.get(WebhookRetention).prune(new Date());
      const again = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', token)
        .send(delivery)
        .expect(200);
      expect(again.body.data.id).not.toBe(first.body.data.id);
      const attempts = await run(
        `SELECT user_id FROM completed_attempts WHERE client_id = :client AND attempt_id = :attempt`,
        { client: gina.clientId, attempt: delivery.payload.attempt_id },
      );
      expect(attempts.map((a) => Number(a.user_id))).toEqual([7]);
      const ids = (await walk('/v2/webhooks', token, {}, 10)).ids;
      expect(ids).toEqual([again.body.data.id]);
    });

    it('shows a client its own events only', async () => {
      const mine = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', aliceToken)
        .send(attemptCompleted())
        .expect(200);
      await request(t.http)
        .get(`/v2/webhooks/${mine.body.data.id}`)
        .set('authorization', bobToken)
        .expect(404);
      await request(t.http)
        .get(`/v2/webhooks/${mine.body.data.id}`)
        .set('authorization', aliceToken)
        .expect(200);
    });
  });
});
