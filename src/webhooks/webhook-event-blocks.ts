import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Database } from '../database/database.js';

/** How often the changes are folded, and how many at most per statement. */
const FOLD_INTERVAL_MS = 1000;
const FOLD_BATCH = 10_000;

/**
 * Folds the webhook events' block changes into the block counts on PostgreSQL (migration
 * CreateListPositions): the triggers append a change row per statement instead of updating a
 * block row, so that concurrent deliveries never wait on each other's counter lock; this keeps
 * the change table small, so that a list's count stays a sum over few rows.
 *
 * One statement moves a batch into both levels (blocks and superblocks): the changes it deletes
 * are the ones it adds, so a reader sees each change exactly once, before or after. SKIP LOCKED
 * lets every instance fold at once; the count rows are upserted in key order, so two folds
 * cannot deadlock on them.
 * SQLite's triggers update the blocks directly: nothing to fold there.
 */
@Injectable()
export class WebhookEventBlocks implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WebhookEventBlocks.name);
  private timer?: NodeJS.Timeout;
  private folding?: Promise<unknown>;

  constructor(private readonly db: Database) {}

  onApplicationBootstrap() {
    if (this.db.dialect !== 'postgres') return;
    this.timer = setInterval(() => {
      this.folding ??= this.foldAll()
        .catch((error: unknown) => this.logger.warn({ err: error }, 'folding block counts failed'))
        .finally(() => (this.folding = undefined));
    }, FOLD_INTERVAL_MS).unref();
  }

  async onApplicationShutdown() {
    clearInterval(this.timer);
    await this.folding;
  }

  /** Folds every pending change; resolves to how many were folded. */
  async foldAll(): Promise<number> {
    if (this.db.dialect !== 'postgres') return 0;
    let folded = 0;
    for (;;) {
      const { rows } = await this.db.execute(
        this.db.sql(
          `WITH moved AS (
             DELETE FROM webhook_event_block_changes WHERE id IN (
               SELECT id FROM webhook_event_block_changes ORDER BY id LIMIT :batch
               FOR UPDATE SKIP LOCKED)
             RETURNING client_id, event, status, block, rows),
           blocks AS (
             INSERT INTO webhook_event_blocks (client_id, event, status, block, rows)
             SELECT client_id, event, status, block, SUM(rows) FROM moved
             GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
             ON CONFLICT (client_id, event, status, block)
             DO UPDATE SET rows = webhook_event_blocks.rows + EXCLUDED.rows),
           superblocks AS (
             INSERT INTO webhook_event_superblocks (client_id, event, status, superblock, rows)
             SELECT client_id, event, status, block / 64, SUM(rows) FROM moved
             GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
             ON CONFLICT (client_id, event, status, superblock)
             DO UPDATE SET rows = webhook_event_superblocks.rows + EXCLUDED.rows)
           SELECT COUNT(*) AS moved FROM moved`,
          { batch: FOLD_BATCH },
        ),
      );
      const moved = Number(rows[0]?.moved ?? 0);
      folded += moved;
      if (moved < FOLD_BATCH) return folded;
    }
  }
}
