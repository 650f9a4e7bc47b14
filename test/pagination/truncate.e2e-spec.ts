import request from 'supertest';
import { ListCountsFolder } from '../../src/database/index.js';
import { createCustomers } from '../factories/customer.factory.js';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { authHeader } from '../support/auth.js';
import { usingPostgres } from '../support/database.js';

const describeOnPostgres = usingPostgres() ? describe : describe.skip;

/**
 * PostgreSQL's TRUNCATE runs none of the triggers that keep a list's counts; migration
 * CountTruncates (list-counts-v2) empties them with the table. SQLite has no TRUNCATE.
 */
describeOnPostgres('a truncated list counts from zero again (PostgreSQL)', () => {
  let t: TestApp;
  let auth: string;
  beforeAll(async () => {
    t = await startTestApp();
    auth = await authHeader(t, ['customers:read', 'webhooks:read', 'webhooks:write']);
  });
  afterAll(async () => {
    await t.close();
  });

  const total = async (path: string) =>
    (await request(t.http).get(path).set('authorization', auth).expect(200)).body.meta.total;

  it('customers', async () => {
    await createCustomers(t, 5);
    expect(await total('/v2/customers')).toBe(5);
    await t.db.query('TRUNCATE customers');
    expect(await total('/v2/customers')).toBe(0);
    await createCustomers(t, 2);
    expect(await total('/v2/customers')).toBe(2);
  });

  it('webhook events, appended changes and folded counts alike', async () => {
    const deliver = () =>
      request(t.http).post('/v2/webhooks').set('authorization', auth).send(attemptCompleted());
    for (let i = 0; i < 3; i++) expect((await deliver()).status).toBe(200);
    await t.app.get(ListCountsFolder).foldAll();
    for (let i = 0; i < 2; i++) expect((await deliver()).status).toBe(200);
    expect(await total('/v2/webhooks')).toBe(5);
    await t.db.query('TRUNCATE webhook_events');
    expect(await total('/v2/webhooks')).toBe(0);
    expect((await deliver()).status).toBe(200);
    expect(await total('/v2/webhooks')).toBe(1);
  });
});
