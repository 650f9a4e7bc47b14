import Sqlite from 'better-sqlite3';
import { copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, TestApp } from '../support/app.js';
import { usingPostgres } from '../support/database.js';

const onSqlite = usingPostgres() ? describe.skip : describe;

/**
 * The WAL's committed pages reach the database file by the checkpoint worker, well before the
 * writer's own backstop checkpoint (thousands of pages away here): a copy of the database file
 * alone, without its WAL, shows a row committed moments ago.
 */
onSqlite('SQLite checkpoints on a worker thread', () => {
  let t: TestApp;
  const copy = join(tmpdir(), `company-api-checkpoint-copy-${process.pid}.sqlite`);

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
    rmSync(copy, { force: true });
  });

  /** What the database file holds, WAL left aside: the probe row, or undefined. */
  const inDatabaseFile = (file: string): number | undefined => {
    copyFileSync(file, copy);
    const db = new Sqlite(copy, { readonly: true });
    try {
      const row = db.prepare('SELECT n FROM checkpoint_probe').get() as { n: number } | undefined;
      return row?.n;
    } catch {
      return undefined; // not there yet (no table), or a copy taken mid-checkpoint
    } finally {
      db.close();
    }
  };

  it('copies a commit into the database file without the writer checkpointing', async () => {
    const file = t.database.url.replace(/^sqlite:/, '');
    await t.db.query('CREATE TABLE checkpoint_probe (n integer)');
    await t.db.query('INSERT INTO checkpoint_probe (n) VALUES (42)');
    for (let waited = 0; inDatabaseFile(file) !== 42; waited += 20) {
      if (waited > 5000) throw new Error('the commit did not reach the database file within 5 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(inDatabaseFile(file)).toBe(42);
  });
});
