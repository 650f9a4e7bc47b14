import { jest } from '@jest/globals';
import { WebhookEvent } from '../../src/webhooks/webhook-event.entity.js';
import { WebhookRetention } from '../../src/webhooks/webhook-retention.service.js';
import { startTestApp, TestApp } from '../support/app.js';
import { usingPostgres } from '../support/database.js';
import { runNode } from '../support/processes.js';

// Seeding boots the CLI in a child process, and the prune below waits out one statement timeout
// and, after each batch, nine times as long as the batch took: minutes on a machine busy enough.
jest.setTimeout(240_000);

/** Row locks are PostgreSQL's: on SQLite a writer holds the whole file, whatever the batch. */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;

describeOnPostgres('webhook retention (PostgreSQL)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('a batch that runs out of time behind a row lock is tried again smaller, and the prune finishes', async () => {
    // More than one batch (1000), so that a second, smaller one follows the first that ran out
    // of time, and a third after that: few batches, few pauses.
    const count = 1200;
    const clientId = 'retention-behind-lock';
    const seeded = await runNode(
      'dist/src/cli.js',
      ['webhooks:seed', '--count', String(count), '--client-id', clientId, '--failed-every', '1'],
      { DATABASE_URL: t.database.url },
    );
    expect(seeded.code).toBe(0);
    // Past a failed event's retention (90 days after its last attempt).
    await t.db.query(
      `UPDATE webhook_events SET last_attempt_at = last_attempt_at - interval '91 days' WHERE client_id = $1`,
      [clientId],
    );
    const events = t.db.getRepository(WebhookEvent);
    expect(await events.countBy({ clientId, status: 'failed' })).toBe(count);

    // Another session holds the oldest event (a replay processing it, say): every batch, oldest
    // first, waits for it.
    const holder = t.db.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    try {
      await holder.query(
        `SELECT id FROM webhook_events WHERE client_id = $1 ORDER BY last_attempt_at LIMIT 1 FOR UPDATE`,
        [clientId],
      );
      const pruning = t.app.get(WebhookRetention).prune();
      const outcome = pruning.then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      );

      // The lock is released once a second DELETE waits on it: the first ran out of time.
      const waitingSince = new Set<string>();
      for (let polls = 0; waitingSince.size < 2; polls++) {
        if (polls > 1200) throw new Error('the prune never tried a second batch in 120 s');
        const waiting: { started: Date }[] = await t.db.query(
          `SELECT query_start AS started FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'
              AND query LIKE 'DELETE FROM webhook_events%'`,
        );
        for (const { started } of waiting) waitingSince.add(started.toISOString());
        if (waitingSince.size < 2) {
          const settled = await Promise.race([
            outcome,
            new Promise((r) => setTimeout(() => r(undefined), 100)),
          ]);
          if (settled)
            throw new Error(
              `the prune ended behind the lock: ${String((settled as any).error ?? 'ok')}`,
            );
        }
      }
      await holder.rollbackTransaction();

      const { result, error } = (await outcome) as {
        result?: { deleted: number };
        error?: unknown;
      };
      expect(error).toBeUndefined();
      expect(result!.deleted).toBe(count);
      expect(await events.countBy({ clientId })).toBe(0);
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
    }
  });
});
