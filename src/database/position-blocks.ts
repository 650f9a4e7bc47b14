import type { QueryRunner } from 'typeorm';
import { POSITION_BLOCK_SIZE } from '../pagination/positions.js';

/**
 * Makes the database keep `<table>_blocks(block, rows)`: how many rows of `table` have their
 * `key` (an integer column, the list's order) in each block of POSITION_BLOCK_SIZE keys. Triggers
 * after every insert and delete, on both databases, started from the rows already there. Call it
 * from the migration of a paged resource; its repository then pages with pageByBlocks()
 * (pagination/positions.ts), and no insert or delete path can forget to count.
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
  const blocks = `${table}_blocks`;
  const size = POSITION_BLOCK_SIZE;
  const postgres = runner.connection.options.type === 'postgres';
  await runner.query(
    `CREATE TABLE ${blocks} (block ${postgres ? 'bigint' : 'integer'} PRIMARY KEY, rows bigint NOT NULL)`,
  );
  await runner.query(
    `INSERT INTO ${blocks} (block, rows) SELECT ${key} / ${size}, COUNT(*) FROM ${table} GROUP BY 1`,
  );
  if (postgres) {
    await runner.query(
      `CREATE FUNCTION ${blocks}_add() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         INSERT INTO ${blocks} (block, rows) SELECT ${key} / ${size}, COUNT(*) FROM changed GROUP BY 1
         ON CONFLICT (block) DO UPDATE SET rows = ${blocks}.rows + EXCLUDED.rows;
         RETURN NULL; END $$`,
    );
    await runner.query(
      `CREATE FUNCTION ${blocks}_remove() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         UPDATE ${blocks} b SET rows = b.rows - d.n
         FROM (SELECT ${key} / ${size} AS block, COUNT(*) AS n FROM changed GROUP BY 1) d
         WHERE b.block = d.block;
         RETURN NULL; END $$`,
    );
    await runner.query(
      `CREATE TRIGGER ${blocks}_add AFTER INSERT ON ${table} REFERENCING NEW TABLE AS changed
         FOR EACH STATEMENT EXECUTE FUNCTION ${blocks}_add()`,
    );
    await runner.query(
      `CREATE TRIGGER ${blocks}_remove AFTER DELETE ON ${table} REFERENCING OLD TABLE AS changed
         FOR EACH STATEMENT EXECUTE FUNCTION ${blocks}_remove()`,
    );
    return;
  }
  await runner.query(
    `CREATE TRIGGER ${blocks}_add AFTER INSERT ON ${table} BEGIN
       INSERT INTO ${blocks} (block, rows) VALUES (NEW.${key} / ${size}, 1)
       ON CONFLICT (block) DO UPDATE SET rows = rows + 1;
     END`,
  );
  await runner.query(
    `CREATE TRIGGER ${blocks}_remove AFTER DELETE ON ${table} BEGIN
       UPDATE ${blocks} SET rows = rows - 1 WHERE block = OLD.${key} / ${size};
     END`,
  );
}

/** Undoes createPositionBlocks(). */
export async function dropPositionBlocks(runner: QueryRunner, table: string): Promise<void> {
  const blocks = `${table}_blocks`;
  const postgres = runner.connection.options.type === 'postgres';
  for (const name of [`${blocks}_add`, `${blocks}_remove`]) {
    await runner.query(`DROP TRIGGER IF EXISTS ${name}${postgres ? ` ON ${table}` : ''}`);
    if (postgres) await runner.query(`DROP FUNCTION IF EXISTS ${name}()`);
  }
  await runner.query(`DROP TABLE ${blocks}`);
}
