import type { QueryRunner } from 'typeorm';
import { createListCountsV1, dropListCountsV1, type ListCountsV1 } from './list-counts-v1.js';

/*
 * FROZEN: migrations call this file, and a migration must do today what it did when it was
 * released. Never edit it (list-counts-v2.spec.ts pins its sha256): make list-counts-v3.ts
 * instead, and let new migrations call that.
 */

/** The counts of one paged list, as its migration declares them: as in v1. */
export type ListCountsV2 = ListCountsV1;

/**
 * createListCountsV1(), and on PostgreSQL a trigger that empties the counts when the table is
 * truncated (`TRUNCATE`, TypeORM's `clear()`), which runs no row or statement triggers of
 * INSERT, UPDATE or DELETE. SQLite has no TRUNCATE: a DELETE without WHERE runs the row triggers
 * (its truncate optimisation is off for a table with triggers).
 */
export async function createListCountsV2(runner: QueryRunner, list: ListCountsV2): Promise<void> {
  await createListCountsV1(runner, list);
  await addTruncateCountsV2(runner, list);
}

/** Undoes createListCountsV2(). */
export async function dropListCountsV2(runner: QueryRunner, list: ListCountsV2): Promise<void> {
  await dropTruncateCountsV2(runner, list);
  await dropListCountsV1(runner, list);
}

/**
 * The TRUNCATE trigger alone, for a list counted before v2 (its counting tables exist already).
 * PostgreSQL only; nothing on SQLite.
 */
export async function addTruncateCountsV2(runner: QueryRunner, list: ListCountsV2): Promise<void> {
  if (runner.connection.options.type !== 'postgres') return;
  const counts = list.counts ?? list.table;
  const emptied = [
    `${counts}_blocks`,
    `${counts}_superblocks`,
    ...(list.appendChanges ? [`${counts}_block_changes`] : []),
  ].join(', ');
  await runner.query(
    `CREATE FUNCTION ${counts}_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN TRUNCATE ${emptied}; RETURN NULL; END $$`,
  );
  await runner.query(
    `CREATE TRIGGER ${counts}_counts_truncated AFTER TRUNCATE ON ${list.table}
     FOR EACH STATEMENT EXECUTE FUNCTION ${counts}_counts_truncated()`,
  );
}

/** Undoes addTruncateCountsV2(). */
export async function dropTruncateCountsV2(runner: QueryRunner, list: ListCountsV2): Promise<void> {
  if (runner.connection.options.type !== 'postgres') return;
  const counts = list.counts ?? list.table;
  await runner.query(`DROP TRIGGER IF EXISTS ${counts}_counts_truncated ON ${list.table}`);
  await runner.query(`DROP FUNCTION IF EXISTS ${counts}_counts_truncated()`);
}
