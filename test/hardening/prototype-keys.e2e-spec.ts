import fc from 'fast-check';
import request from 'supertest';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { createCustomer } from '../factories/customer.factory.js';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';
import { errors } from '../support/responses.js';

/**
 * A key named like an Object.prototype member is an unknown field like any other (CONTRACT §2):
 * 422 naming it, on every route with a body or a query; `__proto__` is 400. Property-based over
 * every Object.prototype name plus random keys.
 */
const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype);
const POISONED_BODY = {
  message: 'The request body contains a forbidden "__proto__" or "constructor.prototype" key.',
};
const POISONED_QUERY = {
  message: 'The query string contains a forbidden "__proto__" or "constructor.prototype" key.',
};
const DECLARED = new Set(['name', 'type', 'company', 'event', 'payload', 'result_mode', 'status']);

/** Prototype names first (each is tried), then random keys a query string keeps as one key. */
const keys = fc.oneof(
  fc.constantFrom(...PROTOTYPE_NAMES),
  fc
    .string({ minLength: 1, maxLength: 20 })
    // Not an array index either: qs makes `result_mode[0]=1` an array (refused as not an object).
    .filter((k) => !DECLARED.has(k) && !/[[\]\0]|^\d+$/.test(k) && k.trim() === k),
);

interface Route {
  name: string;
  send(key: string): Promise<request.Response>;
  /** Where the unknown key is reported. */
  path: (key: string) => string;
  poisoned: { message: string };
}

describe('Prototype-named and random unknown keys (CONTRACT §2)', () => {
  let t: TestApp;
  let routes: Route[];
  beforeAll(async () => {
    t = await startTestApp();
    const auth = await authHeader(t, [
      'customers:read',
      'customers:write',
      'webhooks:read',
      'webhooks:write',
    ]);
    const customer = await createCustomer(t);
    const json = (key: string, base: Record<string, unknown>, value: unknown = 1) =>
      // Built as text: an object literal cannot hold an own `__proto__` key.
      `${JSON.stringify(base).slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(value)}}`;
    routes = [
      {
        name: 'PUT /v2/customers/{id}/company',
        send: (key) =>
          request(t.http)
            .put(`/v2/customers/${customer.id}/company`)
            .set('authorization', auth)
            .set('content-type', 'application/json')
            .send(json(key, { name: 'Acme' })),
        path: (key) => key,
        poisoned: POISONED_BODY,
      },
      {
        name: 'POST /v2/customers (top level)',
        send: (key) =>
          request(t.http)
            .post('/v2/customers')
            .set('authorization', auth)
            .set('content-type', 'application/json')
            .send(json(key, { company: { name: 'Acme' } })),
        path: (key) => key,
        poisoned: POISONED_BODY,
      },
      {
        name: 'POST /v2/customers (in company)',
        send: (key) =>
          request(t.http)
            .post('/v2/customers')
            .set('authorization', auth)
            .set('content-type', 'application/json')
            .send(`{"company":${json(key, { name: 'Acme' })}}`),
        path: (key) => `company.${key}`,
        poisoned: POISONED_BODY,
      },
      {
        name: 'POST /v2/webhooks (envelope)',
        send: (key) =>
          request(t.http)
            .post('/v2/webhooks')
            .set('authorization', auth)
            .set('content-type', 'application/json')
            .send(json(key, attemptCompleted())),
        path: (key) => key,
        poisoned: POISONED_BODY,
      },
      ...['/v2/customers', '/v2/webhooks'].map((url) => ({
        name: `GET ${url}`,
        send: (key: string) =>
          request(t.http)
            .get(`${url}?${encodeURIComponent(key)}=1`)
            .set('authorization', auth),
        path: (key: string) => key,
        poisoned: POISONED_QUERY,
      })),
      {
        name: 'GET /v2/customers (in result_mode)',
        send: (key) =>
          request(t.http)
            .get(`/v2/customers?result_mode[${encodeURIComponent(key)}]=1`)
            .set('authorization', auth),
        path: (key) => `result_mode.${key}`,
        poisoned: POISONED_QUERY,
      },
    ];
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 422 naming the key (400 for __proto__), never a 500, on every route', async () => {
    const names = routes.map((r) => r.name);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...names), keys, async (name, key) => {
        const route = routes.find((r) => r.name === name)!;
        const res = await route.send(key);
        const path = route.path(key);
        const expected =
          key === '__proto__'
            ? { status: 400, body: route.poisoned }
            : {
                status: 422,
                body: errors.invalid({ [path]: [`The ${path} field is not allowed.`] }),
              };
        expect({ status: res.status, body: res.body }).toEqual(expected);
      }),
      { numRuns: 300, examples: PROTOTYPE_NAMES.flatMap((k) => names.map((n) => [n, k])) },
    );
  });

  it('keeps prototype-named payload fields of a webhook, and still validates the payload', async () => {
    const auth = await authHeader(t, ['webhooks:write', 'webhooks:read']);
    const delivery = attemptCompleted({ toString: 1, constructor: 2, valueOf: 'x' });
    const res = await request(t.http)
      .post('/v2/webhooks')
      .set('authorization', auth)
      .send(delivery)
      .expect(200);
    const stored = await request(t.http)
      .get(`/v2/webhooks/${res.body.data.id}`)
      .set('authorization', auth)
      .expect(200);
    expect(stored.body.data.payload).toEqual(delivery.payload);

    // An own `constructor` does not switch the payload's rules off.
    const missing = await request(t.http)
      .post('/v2/webhooks')
      .set('authorization', auth)
      .set('content-type', 'application/json')
      .send('{"event":"learning.attempt.completed","payload":{"constructor":1,"toString":2}}');
    expect({ status: missing.status, body: missing.body }).toEqual({
      status: 422,
      body: errors.invalid({
        'payload.user_id': [expect.any(String)],
        'payload.module_id': [expect.any(String)],
        'payload.attempt_id': [expect.any(String)],
      }),
    });
  });
});
