import type { QueryRunner } from 'typeorm';

/** The block sizes these migrations were released with (frozen: a new size is a new helper). */
const POSITION_BLOCK_SIZE = 4096;
const BLOCKS_PER_SUPERBLOCK = 64;

/**
 * Makes the database keep `<table>_blocks(block, rows)`: how many rows of `table` have their
 * `key` (an integer column, the list's order) in each block of POSITION_BLOCK_SIZE keys. Triggers
 * after every insert and delete, on both databases, started from the rows already there. Used by
 * the released migrations of the customers list only: a new list's migration calls the frozen
 * createListCountsV1() (frozen/list-counts-v1.ts) instead.
 *
 * PostgreSQL counts once a statement (transition tables), so a bulk insert touches each block row
 * once; SQLite has row triggers only. The block row's lock, taken by the trigger in the inserting
 * transaction, orders concurrent inserters on PostgreSQL. A list written to by many concurrent
 * requests should append changes instead (see the webhook events' migration, CreateListPositions).
 */
export async function createPositionBlocks(
  runner: QueryRunner,
  table: string,
  key = 'id',
): Promise<void> {
  await createCounts(runner, table, `${table}_blocks`, 'block', POSITION_BLOCK_SIZE, key);
}

/**
 * The second level of createPositionBlocks(): `<table>_superblocks(superblock, rows)`, counts per
 * BLOCKS_PER_SUPERBLOCK blocks, kept the same way (paged-list.ts places a page in them first).
 */
export async function createPositionSuperblocks(
  runner: QueryRunner,
  table: string,
  key = 'id',
): Promise<void> {
  const keys = POSITION_BLOCK_SIZE * BLOCKS_PER_SUPERBLOCK;
  await createCounts(runner, table, `${table}_superblocks`, 'superblock', keys, key);
}

/** Counts of `table`'s rows per `size` keys in `counts(<column>, rows)`, kept by triggers. */
async function createCounts(
  runner: QueryRunner,
  table: string,
  counts: string,
  column: string,
  size: number,
  key: string,
): Promise<void> {
  const postgres = runner.connection.options.type === 'postgres';
  await runner.query(
    `CREATE TABLE ${counts} (${column} ${postgres ? 'bigint' : 'integer'} PRIMARY KEY, rows bigint NOT NULL)`,
  );
  await runner.query(
    `INSERT INTO ${counts} (${column}, rows) SELECT ${key} / ${size}, COUNT(*) FROM ${table} GROUP BY 1`,
  );
  if (postgres) {
    await runner.query(
      `CREATE FUNCTION ${counts}_add() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         INSERT INTO ${counts} (${column}, rows) SELECT ${key} / ${size}, COUNT(*) FROM changed GROUP BY 1
         ON CONFLICT (${column}) DO UPDATE SET rows = ${counts}.rows + EXCLUDED.rows;
         RETURN NULL; END $$`,
    );
    await runner.query(
      `CREATE FUNCTION ${counts}_remove() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         UPDATE ${counts} b SET rows = b.rows - d.n
         FROM (SELECT ${key} / ${size} AS ${column}, COUNT(*) AS n FROM changed GROUP BY 1) d
         WHERE b.${column} = d.${column};
         RETURN NULL; END $$`,
    );
    await runner.query(
      `CREATE TRIGGER ${counts}_add AFTER INSERT ON ${table} REFERENCING NEW TABLE AS changed
         FOR EACH STATEMENT EXECUTE FUNCTION ${counts}_add()`,
    );
    await runner.query(
      `CREATE TRIGGER ${counts}_remove AFTER DELETE ON ${table} REFERENCING OLD TABLE AS changed
         FOR EACH STATEMENT EXECUTE FUNCTION ${counts}_remove()`,
    );
    return;
  }
  await runner.query(
    `CREATE TRIGGER ${counts}_add AFTER INSERT ON ${table} BEGIN
       INSERT INTO ${counts} (${column}, rows) VALUES (NEW.${key} / ${size}, 1)
       ON CONFLICT (${column}) DO UPDATE SET rows = rows + 1;
     END`,
  );
  await runner.query(
    `CREATE TRIGGER ${counts}_remove AFTER DELETE ON ${table} BEGIN
       UPDATE ${counts} SET rows = rows - 1 WHERE ${column} = OLD.${key} / ${size};
     END`,
  );
}

/** Undoes createPositionBlocks(). */
export function dropPositionBlocks(runner: QueryRunner, table: string): Promise<void> {
  return dropCounts(runner, table, `${table}_blocks`);
}

/** Undoes createPositionSuperblocks(). */
export function dropPositionSuperblocks(runner: QueryRunner, table: string): Promise<void> {
  return dropCounts(runner, table, `${table}_superblocks`);
}

async function dropCounts(runner: QueryRunner, table: string, counts: string): Promise<void> {
  const postgres = runner.connection.options.type === 'postgres';
  for (const name of [`${counts}_add`, `${counts}_remove`]) {
    await runner.query(`DROP TRIGGER IF EXISTS ${name}${postgres ? ` ON ${table}` : ''}`);
    if (postgres) await runner.query(`DROP FUNCTION IF EXISTS ${name}()`);
  }
  await runner.query(`DROP TABLE ${counts}`);
}
