import { randomUUID } from 'node:crypto';
import { createTestDatabase, migratedTo, type TestDatabase } from '../support/database.js';

/**
 * CreateListPositions on a database that already holds customers and webhook events: existing
 * events are numbered in arrival (id) order, and the block counts start from the rows there.
 */
describe('migration CreateListPositions on existing rows (both databases)', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('numbers existing events by id and counts existing rows', async () => {
    const old = await migratedTo(database, 'CreateListPositions1763800006000');
    const ids = Array.from(
      { length: 5 },
      (_, i) => `0190000${i}-0000-7000-8000-${randomUUID().slice(24)}`,
    );
    try {
      for (const [i, id] of [...ids].reverse().entries()) {
        await old.query(
          `INSERT INTO webhook_events (id, event, client_id, dedupe_key, payload, status, attempts, received_at, processed_at)
           VALUES ('${id}', 'learning.attempt.completed', 'c1', 'k${i}', '{}', '${i === 0 ? 'failed' : 'processed'}', 1,
                   '2026-01-0${i + 1} 10:00:00', ${i === 0 ? 'NULL' : `'2026-01-0${i + 1} 10:00:01'`})`,
        );
      }
      for (let i = 0; i < 3; i++)
        await old.query(`INSERT INTO customers (company_name) VALUES ('Old ${i}')`);
    } finally {
      await old.destroy();
    }

    const db = await migratedTo(database);
    try {
      const events = await db.query(
        'SELECT id, seq, status, last_attempt_at FROM webhook_events ORDER BY seq',
      );
      expect(events.map((e: { id: string }) => e.id)).toEqual(ids);
      expect(events.map((e: { seq: unknown }) => Number(e.seq))).toEqual([1, 2, 3, 4, 5]);
      expect(events.every((e: { last_attempt_at: unknown }) => e.last_attempt_at !== null)).toBe(
        true,
      );
      const blocks = await db.query(
        'SELECT client_id, status, SUM(rows) AS n FROM webhook_event_blocks GROUP BY client_id, status ORDER BY status',
      );
      expect(blocks.map((b: { status: string; n: unknown }) => [b.status, Number(b.n)])).toEqual([
        ['failed', 1],
        ['processed', 4],
      ]);
      const [{ n }] = await db.query('SELECT SUM(rows) AS n FROM customers_blocks');
      expect(Number(n)).toBe(3);
      // AddPositionSuperblocks starts the second level from the block counts.
      const superblocks = await db.query(
        'SELECT status, superblock, rows FROM webhook_event_superblocks ORDER BY status',
      );
      expect(
        superblocks.map((b: Record<string, unknown>) => [
          b.status,
          Number(b.superblock),
          Number(b.rows),
        ]),
      ).toEqual([
        ['failed', 0, 1],
        ['processed', 0, 4],
      ]);
      const [{ m }] = await db.query('SELECT SUM(rows) AS m FROM customers_superblocks');
      expect(Number(m)).toBe(3);
      // A new event is numbered after them.
      await db.query(
        `INSERT INTO webhook_events (id, event, client_id, dedupe_key, payload, status, attempts, received_at)
         VALUES ('${randomUUID()}', 'learning.attempt.completed', 'c1', 'new', '{}', 'processed', 1, '2026-02-01 00:00:00')`,
      );
      const [{ top }] = await db.query('SELECT MAX(seq) AS top FROM webhook_events');
      expect(Number(top)).toBe(6);
    } finally {
      await db.destroy();
    }
  });
});
