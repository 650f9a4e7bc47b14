import request from 'supertest';
import { startTestApp, TestApp } from '../support/app.js';
import { errors } from '../support/responses.js';

describe('database, migrations and health', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
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
