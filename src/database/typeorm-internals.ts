import type { Database as SqliteConnection } from 'better-sqlite3';
import type { Pool, PoolClient } from 'pg';
import type { DataSource, QueryRunner, ReplicationMode } from 'typeorm';

/*
 * Every use of TypeORM's undocumented driver and query-runner state, in one file, each checked by
 * typeorm-internals.spec.ts: a TypeORM upgrade that changes one of them fails that spec instead
 * of the service.
 */

/** better-sqlite3's one connection behind `dataSource`, or undefined on PostgreSQL. */
export function sqliteConnectionOf(dataSource: DataSource): SqliteConnection | undefined {
  if (dataSource.options.type !== 'better-sqlite3') return undefined;
  return (dataSource.driver as unknown as { databaseConnection: SqliteConnection })
    .databaseConnection;
}

/** The pg pool behind `dataSource`, or undefined on SQLite. */
export function postgresPoolOf(dataSource: DataSource): Pool | undefined {
  if (dataSource.options.type !== 'postgres') return undefined;
  return (dataSource.driver as unknown as { master: Pool }).master;
}

/**
 * The pg connection a PostgreSQL query runner holds (from its first query or transaction until
 * it is released), or undefined (SQLite, or not connected).
 */
export function postgresClientOf(runner: QueryRunner): PoolClient | undefined {
  if (runner.connection.options.type !== 'postgres') return undefined;
  return (runner as unknown as { databaseConnection?: PoolClient }).databaseConnection;
}

/**
 * Sends every read TypeORM issues outside a transaction (find*, count, getMany… — the query
 * builder asks its driver for a 'slave' runner for those) to `reader`'s connection, and all the
 * rest (writes, raw queries, transactions) to `writer`'s, as TypeORM's replication does for
 * PostgreSQL and MySQL. The better-sqlite3 driver has no replication of its own.
 */
export function routeReads(writer: DataSource, reader: DataSource): void {
  const driver = writer.driver as unknown as {
    createQueryRunner(mode: ReplicationMode): QueryRunner;
  };
  const own = driver.createQueryRunner.bind(driver);
  driver.createQueryRunner = (mode) =>
    mode === 'slave' ? reader.driver.createQueryRunner('slave') : own(mode);
}

/**
 * Makes TypeORM's SQLite driver bind integer parameters instead of writing them into the SQL
 * text, as it otherwise does for every number. With the numbers in the text, a query builder's
 * insert of a webhook handler was a new statement on every delivery: prepared again (its
 * triggers compiled with it) and pushed out of the driver's cache of 100, its memory freed only
 * when the garbage collector got to it. Integers go as BigInt, which better-sqlite3 binds as
 * INTEGER (a JS number would be bound as REAL: 7 into a text column would read '7.0'); other
 * numbers stay as TypeORM writes them.
 */
export function bindIntegers(dataSource: DataSource): void {
  if (dataSource.options.type !== 'better-sqlite3') return;
  const driver = dataSource.driver;
  const own = driver.escapeQueryWithParameters.bind(driver);
  driver.escapeQueryWithParameters = (sql, parameters) => {
    let bound = parameters;
    for (const [name, value] of Object.entries(parameters ?? {})) {
      if (typeof value === 'number' && Number.isSafeInteger(value)) {
        if (bound === parameters) bound = { ...parameters };
        bound[name] = BigInt(value);
      }
    }
    return own(sql, bound);
  };
}

/**
 * Makes `runner` believe a transaction is open (the caller began it itself, e.g. with BEGIN
 * IMMEDIATE, which TypeORM cannot issue) or closed again (the caller ended it): with it open,
 * `runner.manager.transaction()` makes a savepoint and `save()` starts no transaction of its own.
 */
export function markTransaction(runner: QueryRunner, open: boolean): void {
  const state = runner as unknown as { isTransactionActive: boolean; transactionDepth: number };
  state.isTransactionActive = open;
  state.transactionDepth = open ? 1 : 0;
}

/**
 * Releases a PostgreSQL query runner's connection as broken: pg's pool closes it instead of
 * handing it out again, and closing it ends the transaction it held (PostgreSQL rolls back a
 * transaction whose connection goes away).
 */
export async function releaseBroken(runner: QueryRunner, error: unknown): Promise<void> {
  await (
    runner as unknown as { releasePostgresConnection(err: unknown): Promise<void> }
  ).releasePostgresConnection(error);
}
