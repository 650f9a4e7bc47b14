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

interface GroupMember {
  work: (manager: EntityManager) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** The most works one shared commit carries. */
const MAX_GROUP_SIZE = 64;
const pendingGroups = new WeakMap<DataSource, GroupMember[]>();

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
  if (dataSource.options.type !== 'better-sqlite3') return dataSource.transaction(work);
  return new Promise<T>((resolve, reject) => {
    let group = pendingGroups.get(dataSource);
    if (!group || group.length >= MAX_GROUP_SIZE) {
      const members: GroupMember[] = (group = []);
      pendingGroups.set(dataSource, members);
      setImmediate(() => {
        if (pendingGroups.get(dataSource) === members) pendingGroups.delete(dataSource);
        void runGroup(dataSource, members);
      });
    }
    group.push({ work, resolve: resolve as (value: unknown) => void, reject });
  });
}

type Outcome = { value: unknown } | { error: unknown };

async function runGroup(dataSource: DataSource, members: GroupMember[]): Promise<void> {
  let outcomes: Outcome[];
  try {
    outcomes = await transaction(dataSource, async (manager) => {
      if (members.length === 1) return [{ value: await members[0].work(manager) }];
      const connection = (dataSource.driver as unknown as { databaseConnection: Database })
        .databaseConnection;
      const settled: Outcome[] = [];
      for (const member of members) {
        try {
          settled.push({ value: await manager.transaction(member.work) }); // a savepoint
        } catch (error) {
          // SQLite abandoned the transaction (I/O error, disk full…): the group fails as one.
          if (!connection.inTransaction) throw error;
          settled.push({ error });
        }
      }
      return settled;
    });
  } catch (error) {
    for (const member of members) member.reject(error);
    return;
  }
  members.forEach((member, i) => {
    const outcome = outcomes[i];
    if ('error' in outcome) member.reject(outcome.error);
    else member.resolve(outcome.value);
  });
}
