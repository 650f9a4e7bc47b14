import type { DataSource, EntityManager } from 'typeorm';

const sqliteTurns = new WeakMap<DataSource, Promise<unknown>>();

/**
 * Runs `work` when it is its turn on SQLite's one shared connection; on PostgreSQL at once.
 *
 * TypeORM's better-sqlite3 driver has one connection for the whole process. A transaction whose
 * work awaits between statements (a webhook handler) leaves gaps in which any other statement
 * sent on that connection joins the open transaction: a write acknowledged to its caller could be
 * rolled back with someone else's failure, and a second transaction would become a savepoint of
 * the first. So on SQLite every write (and every multi-statement read) takes a turn here; reads
 * that are a single statement need not.
 */
export function inTurn<T>(dataSource: DataSource, work: () => T | Promise<T>): Promise<T> {
  if (dataSource.options.type !== 'better-sqlite3') return Promise.resolve(work());
  const previous = sqliteTurns.get(dataSource) ?? Promise.resolve();
  const run = previous.then(work);
  sqliteTurns.set(
    dataSource,
    run.catch(() => undefined),
  );
  return run;
}

/**
 * `dataSource.transaction(work)`, safe under concurrency on SQLite too (see inTurn). `work` must
 * not call transaction() or inTurn() itself (it would wait for its own turn).
 */
export function transaction<T>(
  dataSource: DataSource,
  work: (manager: EntityManager) => Promise<T>,
): Promise<T> {
  if (dataSource.options.type !== 'better-sqlite3') return dataSource.transaction(work);
  return inTurn(dataSource, () => dataSource.transaction(work));
}
