import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The customers counter, kept by the database itself instead of by each insert path (it was
 * incremented by hand until now); recounted here, so it is exact whatever came before.
 */
export class CountCustomersByTrigger1763800004000 implements MigrationInterface {
  name = 'CountCustomersByTrigger1763800004000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await createRowCounter(queryRunner, 'customers');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropRowCounter(queryRunner, 'customers');
    // As before this migration: the row stays, counted by the application.
    await queryRunner.query(
      `INSERT INTO counters (name, value) SELECT 'customers', COUNT(*) FROM customers`,
    );
  }
}

// Frozen copy of the row-counter helpers as they were when this migration was written.

async function createRowCounter(runner: QueryRunner, table: string): Promise<void> {
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

async function dropRowCounter(runner: QueryRunner, table: string): Promise<void> {
  const postgres = runner.connection.options.type === 'postgres';
  for (const event of ['insert', 'delete']) {
    const name = `counters_${event}_${table}`;
    await runner.query(`DROP TRIGGER IF EXISTS ${name}${postgres ? ` ON ${table}` : ''}`);
    if (postgres) await runner.query(`DROP FUNCTION IF EXISTS ${name}()`);
  }
  await runner.query(`DELETE FROM counters WHERE name = '${table}'`);
}
