import request from 'supertest';
import { basicAuth, createClient } from '../factories/client.factory.js';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { createCustomer, storedCustomer } from '../factories/customer.factory.js';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';
import { rawRequest, type RawResponse } from '../support/raw-http.js';
import { errors, oauthErrors } from '../support/responses.js';

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

  describe('prototype poisoning at the OAuth endpoints is 400 invalid_request, form or JSON', () => {
    let basic: string;
    beforeAll(async () => {
      const client = await createClient(t, { scopes: ['customers:read'] });
      basic = basicAuth(client.clientId, client.clientSecret);
    });
    const params: Record<string, Record<string, string>> = {
      '/oauth/token': { grant_type: 'client_credentials', scope: 'customers:read' },
      '/oauth/revoke': { token: 'x' },
      '/oauth/introspect': { token: 'x' },
    };
    const urls = Object.keys(params);
    const form = (url: string, key: string) =>
      `${key}=1&${new URLSearchParams(params[url]).toString()}`;
    const json = (url: string, member: string) =>
      `{${member},${JSON.stringify(params[url]).slice(1)}`;

    it.each(
      urls.flatMap((url) =>
        [
          '__proto__',
          '%5F%5Fproto%5F%5F',
          '__proto__[admin]',
          'constructor[prototype]',
          'constructor%5Bprototype%5D%5Badmin%5D',
        ].map((key) => [url, key]),
      ),
    )('%s with the form key %s', async (url, key) => {
      const res = await request(t.http)
        .post(url)
        .set('authorization', basic)
        .type('form')
        .send(form(url, key));
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: oauthErrors.poisonedBody,
      });
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it.each(
      urls.flatMap((url) =>
        [
          '"__proto__":{"admin":true}',
          '"\\u005f_proto__":1',
          '"constructor":{"prototype":{}}',
          '"\\u0063onstructor":{"\\u0070rototype":{}}',
        ].map((member) => [url, member]),
      ),
    )('%s with the JSON member %s', async (url, member) => {
      const res = await request(t.http)
        .post(url)
        .set('authorization', basic)
        .set('content-type', 'application/json')
        .send(json(url, member));
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: oauthErrors.poisonedBody,
      });
    });

    it('keeps a form key merely named like a prototype member an ignored unknown parameter', async () => {
      await request(t.http)
        .post('/oauth/token')
        .set('authorization', basic)
        .type('form')
        .send(
          'constructor=1&toString=2&prototype=3&grant_type=client_credentials&scope=customers%3Aread',
        )
        .expect(200);
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

  describe('errors of the HTTP layer itself, in the contract shape with X-Request-Id', () => {
    const GENERATED_ID = /^[0-9a-f-]{36}$/;
    const malformed = { message: 'The request is malformed.' };
    const uriTooLong = { message: 'The request URL is too long.' };
    const headersTooLarge = { message: 'The request headers are too large.' };

    function expectContractError(res: RawResponse, status: number, body: object) {
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({ status, body });
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['x-request-id']).toMatch(GENERATED_ID);
      // RFC 9110 §6.6.1: an origin server with a clock dates its 4xx answers, these too.
      expect(Math.abs(Date.parse(res.headers.date) - Date.now())).toBeLessThan(60_000);
    }

    it('a customer_id too long to be an id is 404 like any id no customer has, not 414', async () => {
      for (const digits of ['9'.repeat(200), '9'.repeat(201), '9'.repeat(5000)]) {
        const res = await request(t.http)
          .get(`/v2/customers/${digits}/company`)
          .set('authorization', auth);
        expect({ status: res.status, body: res.body }).toEqual({
          status: 404,
          body: errors.customerNotFound,
        });
        expect(res.headers['x-request-id']).toEqual(expect.any(String));
      }
    });

    it('414 for a URL over 8 KiB, path or query, without echoing it', async () => {
      const path = `/v2/customers/${'9'.repeat(8192)}/company`;
      const query = `/v2/customers/1/company?x=${'a'.repeat(17_000)}`;
      for (const url of [path, query]) {
        const res = await request(t.http).get(url).set('authorization', auth);
        expect({ status: res.status, body: res.body }).toEqual({ status: 414, body: uriTooLong });
        expect(res.headers['x-request-id']).toMatch(GENERATED_ID);
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        expect(res.text).not.toContain('aaaa');
      }
      // 8 KiB exactly is still a URL.
      const longest = `/health?x=${'a'.repeat(8192 - '/health?x='.length)}`;
      await request(t.http).get(longest).expect(200);
    });

    it('414, not 431, for a URL too long for the parser, even with few headers', async () => {
      const res = await rawRequest(
        t,
        `GET /v2/customers/1/company?x=${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      );
      expectContractError(res, 414, uriTooLong);
    });

    it('431 for headers over 16 KiB, whether or not the parser takes them', async () => {
      for (const size of [17_000, 70_000]) {
        const res = await rawRequest(
          t,
          `GET /v2/customers HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(size)}\r\nConnection: close\r\n\r\n`,
        );
        expectContractError(res, 431, headersTooLarge);
      }
      // Just under: answered by the route.
      const under = await rawRequest(
        t,
        `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(16_000)}\r\nConnection: close\r\n\r\n`,
      );
      expect(under.status).toBe(200);
    });

    it('400 for a malformed percent-encoding in the path, without echoing it', async () => {
      const res = await request(t.http)
        .get('/v2/customers/%ff/company')
        .set('authorization', auth)
        .set('x-request-id', 'trace-me-1');
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: { message: 'The request URL is malformed.' },
      });
      expect(res.headers['x-request-id']).toBe('trace-me-1');
      expect(res.text).not.toContain('%ff');
    });

    it('400 for a request line Node cannot parse', async () => {
      const res = await rawRequest(t, 'GET /v2/customers HTTP/1.1\r\nHost x\r\n\r\n');
      expectContractError(res, 400, malformed);
    });

    it("a head Node refuses (Content-Length beside Transfer-Encoding): 400 with the caller's X-Request-Id, in RFC 6749's shape at /oauth", async () => {
      const head = (path: string, ...ids: string[]) =>
        `POST ${path} HTTP/1.1\r\nHost: x\r\n${ids.map((id) => `X-Request-Id: ${id}\r\n`).join('')}` +
        'Transfer-Encoding: chunked\r\nContent-Length: 1\r\nConnection: close\r\n\r\n0\r\n\r\n';
      const oauthMalformed = {
        error: 'invalid_request',
        error_description: 'The request is malformed.',
      };
      for (const [path, id, body, cacheControl] of [
        ['/v2/webhooks', 'refused-head-1', malformed, undefined],
        ['/oauth/token', 'refused-head-2', oauthMalformed, 'no-store'],
      ] as const) {
        const res = await rawRequest(t, head(path, id));
        expect({
          status: res.status,
          body: JSON.parse(res.body),
          id: res.headers['x-request-id'],
          cacheControl: res.headers['cache-control'],
        }).toEqual({ status: 400, body, id, cacheControl });
      }
      // One that is not short and printable, or sent twice, is not echoed, as anywhere.
      for (const ids of [['has space'], ['twice-1', 'twice-2']]) {
        expectContractError(await rawRequest(t, head('/v2/webhooks', ...ids)), 400, malformed);
      }
    });

    it('400 for an HTTP/1.1 request without Host (RFC 9112 §3.2); HTTP/1.0 needs none', async () => {
      for (const path of ['/health', '/v2/customers/1/company']) {
        const res = await rawRequest(t, `GET ${path} HTTP/1.1\r\nConnection: close\r\n\r\n`);
        expectContractError(res, 400, malformed);
        expect(res.headers['www-authenticate']).toBeUndefined();
      }
      const old = await rawRequest(t, 'GET /health HTTP/1.0\r\n\r\n');
      expect(old.status).toBe(200);
    });

    it('the OAuth endpoints refuse a request without Host in their own error shape (RFC 6749)', async () => {
      const res = await rawRequest(
        t,
        'POST /oauth/token HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 29\r\nConnection: close\r\n\r\ngrant_type=client_credentials',
      );
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
        status: 400,
        body: { error: 'invalid_request', error_description: 'The request is malformed.' },
      });
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-request-id']).toEqual(expect.any(String));

      // The URL and header limits keep their status there, in the same shape.
      for (const [head, status, description] of [
        [
          `POST /oauth/token?${'a'.repeat(9 * 1024)} HTTP/1.1\r\nHost: x\r\n`,
          414,
          'The request URL is too long.',
        ],
        [
          `POST /oauth/token HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(17 * 1024)}\r\n`,
          431,
          'The request headers are too large.',
        ],
      ] as const) {
        const refused = await rawRequest(t, `${head}Connection: close\r\n\r\n`);
        expect({ status: refused.status, body: JSON.parse(refused.body) }).toEqual({
          status,
          body: { error: 'invalid_request', error_description: description },
        });
        expect(refused.headers['cache-control']).toBe('no-store');
      }
    });

    it.each([
      '/docs/%2e%2e/v2/customers/1',
      '/docs/..%5c..%5cpackage.json',
      '/docs/a%00b',
      '/docs/.%2e/',
    ])(
      'a docs path the file server refuses (%s) is 404 like any unknown route, not 403',
      async (path) => {
        const res = await rawRequest(
          t,
          `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: docs-1\r\nConnection: close\r\n\r\n`,
        );
        expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
          status: 404,
          body: errors.routeNotFound,
        });
        expect(res.headers['x-request-id']).toBe('docs-1');
        expect(res.headers['www-authenticate']).toBeUndefined();
      },
    );
  });

  describe('NUL characters and charsets', () => {
    it.each(['/v2/webhooks?event=%00', '/v2/webhooks?event=a%00b'])(
      '%s is 422 (PostgreSQL cannot compare with a NUL)',
      async (url) => {
        const res = await request(t.http).get(url).set('authorization', auth);
        expect({ status: res.status, body: res.body }).toEqual({
          status: 422,
          body: errors.invalid({ event: ['The event must not contain NUL characters.'] }),
        });
      },
    );

    it('a NUL in a webhook payload field, known or not, is 422 and nothing is stored', async () => {
      const res = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', auth)
        .send(attemptCompleted({ note: 'a\u0000b' }));
      expect({ status: res.status, body: res.body }).toEqual({
        status: 422,
        body: errors.invalid({
          'payload.note': ['The payload.note must not contain NUL characters.'],
        }),
      });
      const list = await request(t.http).get('/v2/webhooks').set('authorization', auth).expect(200);
      expect(list.body.data).toEqual([]);
    });

    it('a declared charset other than UTF-8 is 415; UTF-8 however written is read', async () => {
      const customer = await createCustomer(t, { name: 'Before', type: 'plc' });
      const url = `/v2/customers/${customer.id}/company`;
      for (const contentType of [
        'application/json; charset=iso-8859-1',
        'application/json;charset="latin1"',
        'application/json; charset=utf-16',
      ]) {
        const res = await request(t.http)
          .put(url)
          .set('authorization', auth)
          .set('content-type', contentType)
          // supertest would serialize a Buffer as JSON; the bytes do not matter for the refusal.
          .send('{"name":"Caf\u00e9"}');
        expect({ status: res.status, body: res.body }).toEqual({
          status: 415,
          body: { message: 'The request body must be UTF-8 (charset=utf-8).' },
        });
      }
      expect((await storedCustomer(t, customer.id))?.companyName).toBe('Before');
      for (const contentType of [
        'application/json; charset=UTF-8',
        'application/json;charset=utf8',
      ]) {
        await request(t.http)
          .put(url)
          .set('authorization', auth)
          .set('content-type', contentType)
          .send('{"name":"Caf\u00e9"}')
          .expect(200, { data: { name: 'Caf\u00e9', type: 'plc' } });
      }
    });

    it('the token endpoint answers a non-UTF-8 form with 400 invalid_request', async () => {
      const res = await request(t.http)
        .post('/oauth/token')
        .set('content-type', 'application/x-www-form-urlencoded; charset=iso-8859-1')
        .send('grant_type=client_credentials');
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
    });
  });

  describe('authentication before the body (CONTRACT §2 order of checks)', () => {
    const expectMissing = (res: request.Response) => {
      expect({ status: res.status, body: res.body }).toEqual({
        status: 401,
        body: errors.unauthenticated,
      });
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api"');
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
    };

    it('a form body without a token is 401, not 415', async () => {
      expectMissing(
        await request(t.http)
          .put('/v2/customers/1/company')
          .set('content-type', 'application/x-www-form-urlencoded')
          .send('name=A'),
      );
    });

    it('malformed, poisoned or non-UTF-8 bodies without a token are 401: never parsed', async () => {
      for (const [contentType, body] of [
        ['application/json', '{"name":'],
        ['application/json', '{"__proto__":{}}'],
        ['application/json; charset=latin1', '{}'],
        ['text/plain', 'hello'],
      ]) {
        expectMissing(
          await request(t.http)
            .post('/v2/webhooks')
            .set('content-type', contentType)
            .set('authorization', 'Basic dXNlcjpwYXNz')
            .send(body),
        );
      }
    });

    it('a body over 1 MiB without a token is 401, not 413', async () => {
      const big = JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) });
      const res = await request(t.http)
        .put('/v2/customers/1/company')
        .set('content-type', 'application/json')
        .send(big);
      expectMissing(res);
    });

    it('an invalid token is 401 invalid_token before the body too', async () => {
      const res = await request(t.http)
        .put('/v2/customers/1/company')
        .set('authorization', 'Bearer not.a.token')
        .set('content-type', 'text/plain')
        .send('x');
      expect({ status: res.status, body: res.body }).toEqual({
        status: 401,
        body: errors.invalidToken,
      });
    });

    it('a valid token still meets the body checks (415, 413, 400)', async () => {
      const url = '/v2/customers/1/company';
      await request(t.http)
        .put(url)
        .set('authorization', auth)
        .set('content-type', 'text/plain')
        .send('x')
        .expect(415, errors.unsupportedMediaType);
      await request(t.http)
        .put(url)
        .set('authorization', auth)
        .set('content-type', 'application/json')
        .send('{"name":')
        .expect(400, errors.malformedJson);
    });
  });
});
