import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import type { Environment } from '../config/environment.js';
import { execute, select, sql } from '../database/transact.js';

/** A failed event is kept this long after its last attempt (README "Webhooks"). */
export const FAILED_RETENTION_DAYS = 90;
/** Events looked at per batch: each batch is one short DELETE (one short write lock on SQLite). */
const PRUNE_BATCH = 1000;
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
 * Walks the events in insertion order (`seq`) in small batches, each its own statement, yielding
 * to the event loop between them, so intake never waits long. It stops at the first batch
 * received after the later cutoff: nothing received since then can be due. The counts behind
 * paged totals follow the deletes in their own statement's trigger.
 */
@Injectable()
export class WebhookRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WebhookRetention.name);
  private timer?: NodeJS.Timeout;
  private pruning?: Promise<unknown>;

  constructor(
    private readonly dataSource: DataSource,
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
    await this.pruning;
  }

  async prune(now = new Date()): Promise<PruneResult> {
    const db = this.dataSource;
    const days = this.config.get('WEBHOOK_RETENTION_DAYS', { infer: true });
    const processedBefore = new Date(now.getTime() - days * DAY_MS);
    const failedBefore = new Date(now.getTime() - FAILED_RETENTION_DAYS * DAY_MS);
    const latest = processedBefore > failedBefore ? processedBefore : failedBefore;
    let deleted = 0;
    let after: unknown = 0;
    for (;;) {
      const [batch] = await select(
        db,
        sql(
          db,
          `SELECT MAX(seq) AS upto, MAX(CASE WHEN received_at >= :latest THEN 1 ELSE 0 END) AS recent
           FROM (SELECT seq, received_at FROM webhook_events WHERE seq > :after
                 ORDER BY seq LIMIT :batch) batch`,
          { after, latest, batch: PRUNE_BATCH },
        ),
      );
      if (batch?.upto === null || batch?.upto === undefined) break;
      const result = await execute(
        db,
        sql(
          db,
          `DELETE FROM webhook_events WHERE seq > :after AND seq <= :upto
             AND ((status = 'processed' AND processed_at < :processedBefore)
               OR (status = 'failed' AND last_attempt_at < :failedBefore))`,
          { after, upto: batch.upto, processedBefore, failedBefore },
        ),
      );
      deleted += result.affected;
      if (Number(batch.recent) === 1) break;
      after = batch.upto;
      await nextTurn();
    }
    return {
      deleted,
      processed_before: processedBefore.toISOString(),
      failed_before: failedBefore.toISOString(),
    };
  }
}
