import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Database } from './database.js';
import { registeredFeatures } from './features.js';
import { BLOCKS_PER_SUPERBLOCK } from './paged-list.js';

/** How often the changes are folded, and how many at most per statement. */
const FOLD_INTERVAL_MS = 1000;
const FOLD_BATCH = 10_000;

/**
 * Folds the count changes of the lists declared with `appendChanges` into their counts, on
 * PostgreSQL: their triggers append a change row per statement instead of updating a count row,
 * so that concurrent writers never wait on each other's count lock; folding keeps the change
 * table small, so that a list's count stays a sum over few rows.
 *
 * One statement moves a batch into both levels (blocks and superblocks): the changes it deletes
 * are the ones it adds, so a reader sees each change exactly once, before or after. SKIP LOCKED
 * lets every instance fold at once; the count rows are upserted in key order, so two folds
 * cannot deadlock on them. SQLite's triggers update the counts directly: nothing to fold there.
 */
@Injectable()
export class ListCountsFolder implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ListCountsFolder.name);
  private timer?: NodeJS.Timeout;
  private folding?: Promise<unknown>;
  private statements?: string[];

  constructor(private readonly db: Database) {}

  onApplicationBootstrap() {
    if (this.db.dialect !== 'postgres') return;
    this.timer = setInterval(() => {
      this.folding ??= this.foldAll()
        .catch((error: unknown) => this.logger.warn({ err: error }, 'folding list counts failed'))
        .finally(() => (this.folding = undefined));
    }, FOLD_INTERVAL_MS).unref();
  }

  async onApplicationShutdown() {
    clearInterval(this.timer);
    await this.folding;
  }

  /** Folds every pending change of every list; resolves to how many were folded. */
  async foldAll(): Promise<number> {
    if (this.db.dialect !== 'postgres') return 0;
    let folded = 0;
    for (const statement of (this.statements ??= this.foldStatements())) {
      for (;;) {
        const { rows } = await this.db.execute(this.db.sql(statement, { batch: FOLD_BATCH }));
        const moved = Number(rows[0]?.moved ?? 0);
        folded += moved;
        if (moved < FOLD_BATCH) break;
      }
    }
    return folded;
  }

  private foldStatements(): string[] {
    return registeredFeatures()
      .lists.filter((list) => list.appendChanges)
      .map((list) => {
        const metadata = this.db.dataSource.getMetadata(list.entity);
        const counts = list.counts ?? metadata.tableName;
        const columns = [list.scope, ...(list.filters ?? [])]
          .filter((property) => property !== undefined)
          .map((property) => metadata.findColumnWithPropertyName(property)!.databaseName);
        const names = [...columns, ''].join(', ');
        const upsert = (level: string, column: string, expression: string) => `
          INSERT INTO ${counts}_${level} (${names}${column}, rows)
          SELECT ${names}${expression}, SUM(rows) FROM moved
          GROUP BY ${names}${expression} ORDER BY ${names}${expression}
          ON CONFLICT (${names}${column}) DO UPDATE SET rows = ${counts}_${level}.rows + EXCLUDED.rows`;
        return `WITH moved AS (
            DELETE FROM ${counts}_block_changes WHERE id IN (
              SELECT id FROM ${counts}_block_changes ORDER BY id LIMIT :batch
              FOR UPDATE SKIP LOCKED)
            RETURNING ${names}block, rows),
          blocks AS (${upsert('blocks', 'block', 'block')}),
          superblocks AS (${upsert('superblocks', 'superblock', `block / ${BLOCKS_PER_SUPERBLOCK}`)})
          SELECT COUNT(*) AS moved FROM moved`;
      });
  }
}
