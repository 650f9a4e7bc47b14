import Database from 'better-sqlite3';
import request from 'supertest';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';
import { usingPostgres } from '../support/database.js';
import { errors } from '../support/responses.js';
import { createCustomer, storedCustomer } from '../factories/customer.factory.js';

// The PostgreSQL equivalent (a cut connection) is database-faults.e2e-spec.ts.
const onSqlite = usingPostgres() ? describe.skip : describe;

onSqlite('SQLite locked by another process (SQLite pass only)', () => {
  let t: TestApp;
  let auth: string;
  beforeAll(async () => {
    t = await startTestApp();
    auth = await authHeader(t, ['customers:read', 'customers:write']);
  });
  afterAll(async () => {
    await t.close();
  });

  it('waits a bounded time for the lock, answers 503, and writes again once it is free', async () => {
    const customer = await createCustomer(t, { name: 'Before', type: 'plc' });
    const other = new Database(t.database.url.replace(/^sqlite:/, ''));
    other.exec('BEGIN IMMEDIATE');
    try {
      const started = Date.now();
      const res = await request(t.http)
        .put(`/v2/customers/${customer.id}/company`)
        .set('authorization', auth)
        .send({ name: 'During' });
      expect(Date.now() - started).toBeLessThan(8000);
      expect(res.status).toBe(503);
      expect(res.body).toEqual(errors.databaseUnavailable);
      expect(res.headers['retry-after']).toBe('1');
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect((await storedCustomer(t, customer.id))!.companyName).toBe('Before');

    await request(t.http)
      .put(`/v2/customers/${customer.id}/company`)
      .set('authorization', auth)
      .send({ name: 'After' })
      .expect(200, { data: { name: 'After', type: 'plc' } });
  });
});
