import request from 'supertest';
import { createCustomer } from '../factories/customer.factory.js';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';
import { errors } from '../support/responses.js';

/**
 * A query string's percent-encoding must decode to UTF-8 text (CONTRACT §2): a `%` without two
 * hex digits, or bytes that are not UTF-8, are 400, as a `__proto__` key is, not kept as literal
 * text that a filter then looks for.
 */
describe('percent-encoding in query strings', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['a surrogate in UTF-8 (not UTF-8)', '/v2/webhooks?event=%ED%A0%80'],
    ['a byte that starts no character', '/v2/webhooks?event=%FF'],
    ['a % without two hex digits', '/v2/webhooks?event=a%zz'],
    ['in a key', '/v2/webhooks?ev%E0nt=1'],
    ['on a route that reads no query', '/v2/customers/:id/company?x=%'],
  ])('a malformed percent-encoding is 400, not read as literal text (%s)', async (_name, url) => {
    const customer = await createCustomer(t);
    const res = await request(t.http)
      .get(url.replace(':id', String(customer.id)))
      .set('authorization', await authHeader(t, ['customers:read', 'webhooks:read']));
    expect([res.status, res.body]).toStrictEqual([
      400,
      {
        message:
          'The query string is malformed: a % must start a percent-encoded UTF-8 character (%XX).',
      },
    ]);
  });

  it('is refused after the token, as other refused query strings are', async () => {
    const res = await request(t.http).get('/v2/webhooks?event=%FF');
    expect([res.status, res.body]).toStrictEqual([401, errors.unauthenticated]);
  });

  it('percent-encoded UTF-8 and + for a space still read as before', async () => {
    const res = await request(t.http)
      .get('/v2/webhooks?event=caf%C3%A9+x')
      .set('authorization', await authHeader(t, ['webhooks:read']));
    expect([res.status, res.body.meta?.total]).toEqual([200, 0]);
  });
});
