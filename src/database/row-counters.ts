import type { QueryRunner } from 'typeorm';

/**
 * (Superseded by position-blocks.ts; kept for the migrations that created and removed the
 * customers counter.)
 *
 * Makes the database keep `counters.<table>` equal to the number of rows of `table`: triggers
 * after every insert and delete, on both databases, and the counter started from the rows already
 * there. Call it from the migration of a paged resource; its list then reads an exact `total` by
 * primary key (counterQuery()) and no insert or delete path can forget to count.
 *
 * PostgreSQL counts once a statement (transition tables), so a bulk insert updates the counter
 * once; SQLite has row triggers only. Either way the counter row's lock, taken by the trigger in
 * the inserting transaction, orders concurrent inserters, so the total stays exact.
 */
export async function createRowCounter(runner: QueryRunner, table: string): Promise<void> {
  await runner.query(`DELETE FROM counters WHERE name = '${table}'`);
  await runner.query(
    `INSERT INTO counters (name, value) SELECT '${table}', COUNT(*) FROM ${table}`,
  );
  if (runner.connection.options.type === 'postgres') {
    for (const [event, rows, sign] of [
      ['INSERT', 'NEW', '+'],
      ['DELETE', 'OLD', '-'],
    ]) {
      const fn = `counters_${event.toLowerCase()}_${table}`;
      await runner.query(
        `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ` +
          `UPDATE counters SET value = value ${sign} (SELECT COUNT(*) FROM changed) WHERE name = '${table}'; ` +
          `RETURN NULL; END $$`,
      );
      await runner.query(
        `CREATE TRIGGER ${fn} AFTER ${event} ON ${table} REFERENCING ${rows} TABLE AS changed ` +
          `FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`,
      );
    }
    return;
  }
  for (const [event, sign] of [
    ['INSERT', '+'],
    ['DELETE', '-'],
  ]) {
    await runner.query(
      `CREATE TRIGGER counters_${event.toLowerCase()}_${table} AFTER ${event} ON ${table} ` +
        `BEGIN UPDATE counters SET value = value ${sign} 1 WHERE name = '${table}'; END`,
    );
  }
}

/** Undoes createRowCounter() (the counter row goes too). */
export async function dropRowCounter(runner: QueryRunner, table: string): Promise<void> {
  const postgres = runner.connection.options.type === 'postgres';
  for (const event of ['insert', 'delete']) {
    const name = `counters_${event}_${table}`;
    await runner.query(`DROP TRIGGER IF EXISTS ${name}${postgres ? ` ON ${table}` : ''}`);
    if (postgres) await runner.query(`DROP FUNCTION IF EXISTS ${name}()`);
  }
  await runner.query(`DELETE FROM counters WHERE name = '${table}'`);
}
