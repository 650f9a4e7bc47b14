import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Environment } from '../config/environment.js';
import { Database } from '../database/index.js';
import { isStatementTimeout as isTimeout } from '../common/exceptions/database-errors.js';

/** A failed event is kept this long after its last attempt (docs/operations.md "Webhook retention"). */
export const FAILED_RETENTION_DAYS = 90;
/** Events looked at per batch: each batch is one short DELETE (one short write lock on SQLite). */
const PRUNE_BATCH = 1000;
/**
 * After each batch the prune waits this many times as long as the batch took, so that it takes
 * at most a tenth of the database's write time (SQLite's one write lock; PostgreSQL's CPU and
 * I/O on a small machine) and intake keeps the rest (at 6×, PostgreSQL with a 10M-event table
 * kept 77 %: docs/benchmarks.md). A prune of a million rows takes one to four minutes.
 */
const PAUSE_PER_BATCH_TIME = 9;
/** How often the background pruning runs. */
const PRUNE_INTERVAL_MS = 10 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface PruneResult {
  deleted: number;
  processed_before: string;
  failed_before: string;
}

/**
 * Bounded webhook storage: a processed event is deleted WEBHOOK_RETENTION_DAYS after it was
 * processed, a failed one FAILED_RETENTION_DAYS after its last attempt. Runs in the background
 * every PRUNE_INTERVAL_MS and on `webhooks:prune`.
 *
 * Deletes in small batches found by the (status, last_attempt_at) index, each batch its own
 * statement, with a pause after each (PAUSE_PER_BATCH_TIME), so intake never waits long, from
 * this process or another (`webhooks:prune` runs in the CLI's). The counts
 * behind paged totals follow the deletes in their own statement's trigger.
 */
@Injectable()
export class WebhookRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WebhookRetention.name);
  private timer?: NodeJS.Timeout;
  private pruning?: Promise<unknown>;
  /** Aborted on shutdown: a prune in its pause stops there (the rows go at the next run). */
  private readonly stopping = new AbortController();

  constructor(
    private readonly db: Database,
    private readonly config: ConfigService<Environment, true>,
  ) {}

  onApplicationBootstrap() {
    this.timer = setInterval(() => {
      this.pruning ??= this.prune()
        .then(({ deleted }) => deleted && this.logger.log({ deleted }, 'pruned webhook events'))
        .catch((error: unknown) => this.logger.warn({ err: error }, 'pruning webhooks failed'))
        .finally(() => (this.pruning = undefined));
    }, PRUNE_INTERVAL_MS).unref();
  }

  async onApplicationShutdown() {
    clearInterval(this.timer);
    this.stopping.abort();
    await this.pruning;
  }

  async prune(now = new Date()): Promise<PruneResult> {
    const days = this.config.get('WEBHOOK_RETENTION_DAYS', { infer: true });
    const processedBefore = new Date(now.getTime() - days * DAY_MS);
    const failedBefore = new Date(now.getTime() - FAILED_RETENTION_DAYS * DAY_MS);
    const deleted =
      (await this.pruneStatus('processed', processedBefore)) +
      (await this.pruneStatus('failed', failedBefore));
    return {
      deleted,
      processed_before: processedBefore.toISOString(),
      failed_before: failedBefore.toISOString(),
    };
  }

  /**
   * Deletes the events in `status` last attempted before `before`, oldest first, in batches. A
   * batch that runs out of time (locks held by a replay beside it, a busy machine) is tried again
   * at half the size, down to one event, before the prune gives up.
   */
  private async pruneStatus(status: string, before: Date): Promise<number> {
    let batch = PRUNE_BATCH;
    let deleted = 0;
    for (;;) {
      const started = performance.now();
      let affected: number;
      try {
        ({ affected } = await this.db.execute(this.deleteBatch(status, before, batch)));
      } catch (error) {
        if (batch === 1 || !isTimeout(error) || this.stopping.signal.aborted) throw error;
        batch = Math.ceil(batch / 2);
        this.logger.warn({ batch }, 'a prune batch ran out of time; trying a smaller one');
        continue;
      }
      deleted += affected;
      // Not `affected < batch`: a batch whose rows changed meanwhile deletes fewer than it
      // found, with more behind it.
      if (affected === 0 || this.stopping.signal.aborted) return deleted;
      const pause = (performance.now() - started) * PAUSE_PER_BATCH_TIME;
      await sleep(pause, undefined, { signal: this.stopping.signal }).catch(() => undefined);
    }
  }

  private deleteBatch(status: string, before: Date, batch: number) {
    // The condition is repeated on the rows deleted: on PostgreSQL a row changed meanwhile (a
    // failed event that a replay just processed) is checked again as it is now, whereas the
    // subquery's ids are not, and a processed event would be deleted with the failed ones.
    return this.db.sql(
      `DELETE FROM webhook_events WHERE id IN (
         SELECT id FROM webhook_events WHERE status = :status AND last_attempt_at < :before
         ORDER BY last_attempt_at LIMIT :batch)
       AND status = :status AND last_attempt_at < :before`,
      { status, before, batch },
    );
  }
}
