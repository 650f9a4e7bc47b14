import { Injectable } from '@nestjs/common';
import { Database } from '../database/index.js';

/** Rows per statement, each in its own transaction: well inside the 3 s statement timeout. */
const ROWS_PER_STATEMENT = 20_000;
/** Connections seeding at once where transactions run side by side (this machine class has 2 cores). */
const CONNECTIONS_AT_ONCE = 2;
const SEED_EVENT = 'learning.attempt.completed';
const SEED_ERROR = 'Seeded failure.';

export interface WebhookSeed {
  count: number;
  clientId: string;
  /** Every k-th event is stored failed; 0 for none. */
  failedEvery: number;
  /** The newest seeded event was received this many days ago (0: now). */
  ageDays?: number;
}

/**
 * Stored events for benchmarks and tests (`webhooks:seed`): generated inside the database
 * (generate_series on PostgreSQL, a recursive CTE on SQLite), so ten million rows cost no
 * round trips. Each has a fresh time-ordered UUID and a distinct attempt_id; received a
 * millisecond apart, ending now or `ageDays` ago (old events to prune). Handlers do not run:
 * these are records, not deliveries.
 */
@Injectable()
export class WebhookSeeder {
  constructor(private readonly db: Database) {}

  async seed({
    count,
    clientId,
    failedEvery,
    ageDays = 0,
  }: WebhookSeed): Promise<{ created: number }> {
    const db = this.db;
    const endMs = Date.now() - ageDays * 24 * 60 * 60 * 1000;
    const chunk = (done: number) => ({
      from: done + 1,
      to: done + Math.min(ROWS_PER_STATEMENT, count - done),
      count,
      endMs,
      client: clientId,
      failedEvery,
      event: SEED_EVENT,
      error: SEED_ERROR,
    });
    if (!db.writesTakeTurns) {
      // Chunks on CONNECTIONS_AT_ONCE connections at once (PostgreSQL): one backend per core
      // builds rows and indexes; seq numbers come from the sequence in the order rows are stored.
      let next = 0;
      const worker = async () => {
        for (let done = next; done < count; done = next) {
          next += ROWS_PER_STATEMENT;
          await db.execute(db.sql(SEED, chunk(done)));
        }
      };
      await Promise.all(Array.from({ length: CONNECTIONS_AT_ONCE }, worker));
      // Fresh statistics for the planner: with the ones from before a bulk insert, the pruning
      // query bitmap-scanned every old row of the table for each batch of 1,000 (470 ms a batch).
      await db.execute(db.sql('ANALYZE webhook_events'));
      return { created: count };
    }
    // One writer (SQLite): chunks one after the other, numbered after the largest seq.
    for (let done = 0; done < count; done += ROWS_PER_STATEMENT) {
      await db.write(function* () {
        // Read in the same write transaction: nothing can take these numbers meanwhile.
        const top = yield db.sql('SELECT COALESCE(MAX(seq), 0) AS seq FROM webhook_events');
        const base = Number(top.rows[0].seq) - done;
        yield db.sql(SEED, { ...chunk(done), base });
      });
    }
    return { created: count };
  }
}

// n runs from :from to :to; event n is received at endMs - (count - n) ms. PostgreSQL numbers the
// rows from the same sequence as live inserts (which may run meanwhile); SQLite, the one
// writer, numbers them base + n. Database.sql() takes this database's text.
const SEED = {
  postgres: `
INSERT INTO webhook_events (id, event, client_id, dedupe_key, payload, status, attempts,
  last_error, received_at, processed_at, last_attempt_at, seq)
SELECT uuid, :event, :client, 'seed:' || uuid, '{"user_id":7,"module_id":3,"attempt_id":' || n || '}',
  CASE WHEN failed THEN 'failed' ELSE 'processed' END, 1,
  CASE WHEN failed THEN :error END, at, CASE WHEN failed THEN NULL ELSE at END, at,
  nextval('webhook_events_seq')
FROM (
  SELECT n, failed, at,
    CAST(substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 14, 3) || '-8'
      || substr(r, 18, 3) || '-' || substr(r, 21, 12) AS uuid) AS uuid
  FROM (
    SELECT n, CAST(:failedEvery AS int) > 0 AND n % CAST(:failedEvery AS int) = 0 AS failed,
      to_timestamp((CAST(:endMs AS bigint) - (CAST(:count AS bigint) - n)) / 1000.0)
        AT TIME ZONE 'UTC' AS at,
      lpad(to_hex(CAST(:endMs AS bigint) - (CAST(:count AS bigint) - n)), 12, '0') AS h,
      replace(CAST(gen_random_uuid() AS text), '-', '') AS r
    FROM generate_series(CAST(:from AS bigint), CAST(:to AS bigint)) AS n
  ) generated
) events`,
  sqlite: `
WITH RECURSIVE numbers(n) AS (
  SELECT :from UNION ALL SELECT n + 1 FROM numbers WHERE n < :to
)
INSERT INTO webhook_events (id, event, client_id, dedupe_key, payload, status, attempts,
  last_error, received_at, processed_at, last_attempt_at, seq)
SELECT uuid, :event, :client, 'seed:' || uuid, '{"user_id":7,"module_id":3,"attempt_id":' || n || '}',
  CASE WHEN failed THEN 'failed' ELSE 'processed' END, 1,
  CASE WHEN failed THEN :error END, at, CASE WHEN failed THEN NULL ELSE at END, at, :base + n
FROM (
  SELECT n, failed, strftime('%Y-%m-%d %H:%M:%f', ms / 1000.0, 'unixepoch') AS at,
    substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 14, 3) || '-8'
      || substr(r, 18, 3) || '-' || substr(r, 21, 12) AS uuid
  FROM (
    SELECT n, :failedEvery > 0 AND n % :failedEvery = 0 AS failed, :endMs - (:count - n) AS ms,
      printf('%012x', :endMs - (:count - n)) AS h, lower(hex(randomblob(16))) AS r
    FROM numbers
  ) generated
) events
WHERE true`,
};
