import type { DataSource, EntityManager } from 'typeorm';

const sqliteQueues = new WeakMap<DataSource, Promise<unknown>>();

/**
 * `dataSource.transaction(work)`, safe under concurrency on SQLite too.
 *
 * TypeORM's better-sqlite3 driver has one connection and one shared query runner, so two
 * transactions started concurrently would nest (the second becomes a savepoint of the first, and
 * a rollback of either can undo the other's work). On SQLite transactions therefore take turns
 * through a per-DataSource queue; on PostgreSQL each runs on its own pooled connection at once.
 *
 * `work` must not call transaction() itself (it would wait for its own turn); nest with
 * `manager.transaction()` instead.
 */
export function transaction<T>(
  dataSource: DataSource,
  work: (manager: EntityManager) => Promise<T>,
): Promise<T> {
  if (dataSource.options.type !== 'better-sqlite3') return dataSource.transaction(work);
  const previous = sqliteQueues.get(dataSource) ?? Promise.resolve();
  const run = previous.then(() => dataSource.transaction(work));
  sqliteQueues.set(
    dataSource,
    run.catch(() => undefined),
  );
  return run;
}
