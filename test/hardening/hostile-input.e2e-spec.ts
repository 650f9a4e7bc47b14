import request from 'supertest';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { createCustomer, storedCustomer } from '../factories/customer.factory.js';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';
import { errors } from '../support/responses.js';

/** The reproductions of the second hostile-input review (CONTRACT §2), one test each. */
describe('Hostile input (CONTRACT §2)', () => {
  let t: TestApp;
  let auth: string;
  beforeAll(async () => {
    t = await startTestApp();
    auth = await authHeader(t, [
      'customers:read',
      'customers:write',
      'webhooks:read',
      'webhooks:write',
    ]);
  });
  afterAll(async () => {
    await t.close();
  });

  const poisoned = {
    message: 'The request body contains a forbidden "__proto__" or "constructor.prototype" key.',
  };

  describe('prototype poisoning in JSON bodies is 400, however the key is escaped', () => {
    it.each([
      ['a plain __proto__ key', '{"__proto__":{"a":1},"name":"A"}'],
      ['an escaped __proto__ key', '{"\\u005f_proto__":{"a":1},"name":"A"}'],
      ['a fully escaped __proto__ key', '{"\\u005F\\u005Fproto\\u005f\\u005f":{},"name":"A"}'],
      ['constructor.prototype', '{"constructor":{"prototype":{"a":1}},"name":"A"}'],
      ['an escaped constructor.prototype', '{"\\u0063onstructor":{"prototype":{}},"name":"A"}'],
    ])('PUT company with %s', async (_what, body) => {
      const customer = await createCustomer(t, { name: 'Before', type: 'plc' });
      const res = await request(t.http)
        .put(`/v2/customers/${customer.id}/company`)
        .set('authorization', auth)
        .set('content-type', 'application/json')
        .send(body);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: poisoned });
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
      expect((await storedCustomer(t, customer.id))?.companyName).toBe('Before');
    });

    it('a webhook payload with an escaped __proto__ key is refused, not stored', async () => {
      const delivery = attemptCompleted();
      const body = JSON.stringify(delivery).replace(
        '"payload":{',
        '"payload":{"\\u005f_proto__":{"admin":true},',
      );
      const res = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', auth)
        .set('content-type', 'application/json')
        .send(body);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: poisoned });
      const list = await request(t.http).get('/v2/webhooks').set('authorization', auth).expect(200);
      expect(list.body.data).toEqual([]);
    });
  });

  it('keeps malformed JSON a 400 in the contract shape', async () => {
    const res = await request(t.http)
      .put('/v2/customers/1/company')
      .set('authorization', auth)
      .set('content-type', 'application/json')
      .send('{"name":');
    expect({ status: res.status, body: res.body }).toEqual({
      status: 400,
      body: errors.malformedJson,
    });
  });
});
