import type { Database } from 'better-sqlite3';
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

/** better-sqlite3's one connection behind `dataSource`, or undefined on PostgreSQL. */
export function sqliteConnection(dataSource: DataSource): Database | undefined {
  if (dataSource.options.type !== 'better-sqlite3') return undefined;
  return (dataSource.driver as unknown as { databaseConnection: Database }).databaseConnection;
}

/** What one item of a batch came to: its value, or its own error. */
export type Outcome<T> = { value: T } | { error: unknown };

/** The items of one turn waiting for their batch to run, and their callers. */
export interface TurnBatch<I, T> {
  items: I[];
  answers: { resolve: (value: T) => void; reject: (error: unknown) => void }[];
}

/**
 * Batching by turn of the event loop: items submitted in the same turn (concurrent requests) go
 * to `run` together, once, after that turn (up to `maxSize` a batch). Each caller gets its own
 * item's outcome; if `run` throws, every caller of the batch gets that error. Used for SQLite's
 * shared commits (execute() and groupedTransaction()).
 */
export function inTurnBatch<I, T>(
  batches: WeakMap<DataSource, TurnBatch<I, T>>,
  dataSource: DataSource,
  item: I,
  maxSize: number,
  run: (items: I[]) => Promise<Outcome<T>[]>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let batch = batches.get(dataSource);
    if (!batch || batch.items.length >= maxSize) {
      const started: TurnBatch<I, T> = (batch = { items: [], answers: [] });
      batches.set(dataSource, started);
      setImmediate(() => {
        if (batches.get(dataSource) === started) batches.delete(dataSource);
        run(started.items).then(
          (outcomes) =>
            outcomes.forEach((outcome, i) => {
              if ('error' in outcome) started.answers[i].reject(outcome.error);
              else started.answers[i].resolve(outcome.value);
            }),
          (error: unknown) => started.answers.forEach((answer) => answer.reject(error)),
        );
      });
    }
    batch.items.push(item);
    batch.answers.push({ resolve, reject });
  });
}

type Work = (manager: EntityManager) => Promise<unknown>;

/** The most works one shared commit carries. */
const MAX_GROUP_SIZE = 64;
const pendingGroups = new WeakMap<DataSource, TurnBatch<Work, unknown>>();

/**
 * transaction(), for hot paths whose work is one small unit (a webhook delivery): on SQLite the
 * works started in the same turn of the event loop (concurrent requests) share one transaction
 * and so one commit, which costs far more than their few inserts (BENCHMARKS.md). Each work runs
 * in a savepoint of its own, one after the other: one that throws is undone alone and only its
 * caller gets the error. Every caller is answered after the shared commit; if SQLite abandons
 * the transaction or the commit fails, every caller of the group gets the error and nothing of
 * the group is kept. On PostgreSQL, transaction() as it is (each work on its own connection).
 */
export function groupedTransaction<T>(
  dataSource: DataSource,
  work: (manager: EntityManager) => Promise<T>,
): Promise<T> {
  if (!sqliteConnection(dataSource)) return dataSource.transaction(work);
  return inTurnBatch(pendingGroups, dataSource, work, MAX_GROUP_SIZE, (works) =>
    transaction(dataSource, async (manager) => {
      if (works.length === 1) return [{ value: await works[0](manager) }];
      const outcomes: Outcome<unknown>[] = [];
      for (const each of works) {
        try {
          outcomes.push({ value: await manager.transaction(each) }); // a savepoint
        } catch (error) {
          // SQLite abandoned the transaction (I/O error, disk full…): the group fails as one.
          if (!sqliteConnection(dataSource)!.inTransaction) throw error;
          outcomes.push({ error });
        }
      }
      return outcomes;
    }),
  ) as Promise<T>;
}
