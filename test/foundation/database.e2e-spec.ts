import request from 'supertest';
import { Database, insertUnlessConflict } from '../../src/database/index.js';
import { CompletedAttempt } from '../../src/learning/completed-attempt.entity.js';
import { startTestApp, TestApp } from '../support/app.js';
import { errors } from '../support/responses.js';

describe('database, migrations and health', () => {
  let t: TestApp;
  let db: Database;
  beforeAll(async () => {
    t = await startTestApp();
    db = t.app.get(Database);
  });
  afterAll(async () => {
    await t.close();
  });

  it('applied every migration on start', async () => {
    const rows: { name: string }[] = await t.db.query('SELECT name FROM migrations ORDER BY id');
    expect(rows.map((r) => r.name)).toEqual(t.db.migrations.map((m) => m.name));
    expect(await t.db.showMigrations()).toBe(false);
  });

  it('has no drift between entities and migrations', async () => {
    const sql = await t.db.driver.createSchemaBuilder().log();
    expect(sql.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('migrates down and up again cleanly', async () => {
    for (let i = 0; i < t.db.migrations.length; i++) await t.db.undoLastMigration();
    expect(await t.db.showMigrations()).toBe(true);
    await t.db.runMigrations();
    expect(await t.db.showMigrations()).toBe(false);
  });

  it('binds statement parameters by name, the same text with new values each time', async () => {
    // The text is translated once; integers are bound as integers (better-sqlite3 would bind a
    // JS number as a REAL, and 7 cast to text would read '7.0').
    for (const [n, word] of [
      [7, 'seven'],
      [123456789, 'big'],
    ] as const) {
      const rows = await db.select(
        db.sql('SELECT :word AS word, CAST(:n AS VARCHAR(20)) AS n, :m + 1 AS next', {
          n,
          m: n,
          word,
        }),
      );
      expect(rows).toEqual([{ n: String(n), word, next: n + 1 }]);
    }
    const at = new Date('2026-01-02T03:04:05.678Z');
    const stored = await db.execute(db.sql('SELECT CAST(:at AS VARCHAR(40)) AS at', { at }));
    expect(String(stored.rows[0].at)).toMatch(/^2026-01-02[ T]0?\d:04:05/);
  });

  it('commits writes issued together, each answered on its own, a failing one alone', async () => {
    // A table of the test's own: the statements' table does not matter, only how they commit.
    await t.db.query(
      'CREATE TABLE IF NOT EXISTS write_probes (name varchar(64) PRIMARY KEY, value integer NOT NULL)',
    );
    const insert = (n: string) =>
      db.sql('INSERT INTO write_probes (name, value) VALUES (:n, 1)', { n });
    await db.execute(insert('group-c'));
    await db.execute(insert('group-d'));
    // Issued in the same tick: on SQLite they share one commit (group commit).
    const outcomes = await Promise.allSettled([
      db.execute(insert('group-a')),
      db.execute(insert('group-d')), // the primary key refuses this one only
      db.execute(
        db.sql('UPDATE write_probes SET value = value + 1 WHERE name = :n', { n: 'group-c' }),
      ),
      db.execute(insert('group-b')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect(outcomes[2]).toEqual({ status: 'fulfilled', value: { rows: [], affected: 1 } });
    const rows = await t.db.query(
      `SELECT name, value FROM write_probes WHERE name LIKE 'group-%' ORDER BY name`,
    );
    expect(rows.map((r: { name: string; value: unknown }) => [r.name, Number(r.value)])).toEqual([
      ['group-a', 1],
      ['group-b', 1],
      ['group-c', 2],
      ['group-d', 1],
    ]);
  });

  it('inserts a row unless it collides with a stored one (insertUnlessConflict)', async () => {
    const attempt = (attemptId: number, userId: number) => ({
      clientId: 'unless-conflict',
      attemptId,
      userId,
      moduleId: 1,
      recordedAt: new Date(),
    });
    const went = [];
    for (const row of [attempt(1, 10), attempt(2, 20), attempt(1, 11)]) {
      went.push(await db.transaction((m) => insertUnlessConflict(m, CompletedAttempt, row)));
    }
    expect(went).toEqual([true, true, false]);
    const stored = (await t.db.query(
      `SELECT attempt_id, user_id FROM completed_attempts WHERE client_id = 'unless-conflict' ORDER BY attempt_id`,
    )) as { attempt_id: unknown; user_id: unknown }[];
    expect(stored.map((r) => [Number(r.attempt_id), Number(r.user_id)])).toEqual([
      [1, 10],
      [2, 20],
    ]);
  });

  it('is live and ready, not ready while the database is gone, ready again after', async () => {
    await request(t.http).get('/health').expect(200, { status: 'ok' });
    await request(t.http).get('/health/ready').expect(200, { status: 'ok', database: 'up' });

    await t.db.destroy();
    const down = await request(t.http).get('/health/ready');
    expect(down.status).toBe(503);
    expect(down.body).toEqual(errors.notReady);

    await t.db.initialize();
    await request(t.http).get('/health/ready').expect(200, { status: 'ok', database: 'up' });
  });
});
