import request from 'supertest';
import { basicAuth, createClient } from '../factories/client.factory.js';
import { createCustomer } from '../factories/customer.factory.js';
import { authHeader, senderHeaders } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';
import { rawRequest } from '../support/raw-http.js';
import { errors, noStore, oauthErrors } from '../support/responses.js';

/** The reproductions of the fourth outside review (CONTRACT §2, §3, §7), one test each. */
describe('Fourth outside review', () => {
  let t: TestApp;
  let all: string;
  beforeAll(async () => {
    t = await startTestApp();
    all = await authHeader(t, ['customers:read', 'customers:write']);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('a request target in absolute form (RFC 9112 §3.2.2) is the same request', () => {
    const send = (head: string, body = '') =>
      rawRequest(
        t,
        `${head}\r\nHost: localhost\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `Connection: close\r\n\r\n${body}`,
      );

    it('POST http://host/oauth/token with a form issues a token (it was 415)', async () => {
      const client = await createClient(t, { grants: ['client_credentials'] });
      const res = await send(
        `POST http://localhost/oauth/token HTTP/1.1\r\n` +
          `Authorization: ${basicAuth(client.clientId, client.clientSecret)}\r\n` +
          'Content-Type: application/x-www-form-urlencoded',
        'grant_type=client_credentials&scope=customers:read',
      );
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toMatchObject({ token_type: 'Bearer' });
      expect(res.headers['cache-control']).toBe(noStore['cache-control']);
    });

    it('its errors at /oauth/* are RFC 6749 ones, with no-store', async () => {
      const res = await send(
        'POST http://localhost/oauth/token HTTP/1.1\r\nContent-Type: application/json',
        '{x',
      );
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
        status: 400,
        body: oauthErrors.malformedJson,
      });
      expect(res.headers['cache-control']).toBe(noStore['cache-control']);
    });

    it('a JSON key given twice at /oauth/* is invalid_request there too', async () => {
      const client = await createClient(t, { grants: ['client_credentials'] });
      const res = await send(
        `POST https://localhost/oauth/token HTTP/1.1\r\n` +
          `Authorization: ${basicAuth(client.clientId, client.clientSecret)}\r\n` +
          'Content-Type: application/json',
        '{"grant_type":"client_credentials","scope":"customers:read","scope":"customers:write"}',
      );
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
        status: 400,
        body: oauthErrors.repeatedParameter('scope'),
      });
    });

    it('an API route answers as in origin form', async () => {
      const customer = await createCustomer(t, { name: 'A', type: 'plc' });
      const res = await send(
        `GET http://localhost/v2/customers/${customer.id}/company HTTP/1.1\r\nAuthorization: ${all}`,
      );
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
        status: 200,
        body: { data: { name: 'A', type: 'plc' } },
      });
    });
  });

  it('a malformed URL under /oauth/ is 400 invalid_request with no-store, as a missing Host', async () => {
    // In origin form and in absolute form (rewritten to origin form before routing).
    for (const target of ['/oauth/token%', 'http://x/oauth/token%']) {
      const res = await rawRequest(
        t,
        `POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      );
      expect({ target, status: res.status, body: JSON.parse(res.body) }).toEqual({
        target,
        status: 400,
        body: oauthErrors.invalidRequest('The request URL is malformed.'),
      });
      expect(res.headers['cache-control']).toBe(noStore['cache-control']);
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
    }
  });

  it('a CONNECT request is 404 in the contract shape with an id (Node closed it unanswered)', async () => {
    for (const target of ['/v2/customers', 'localhost:443']) {
      const res = await rawRequest(
        t,
        `CONNECT ${target} HTTP/1.1\r\nHost: x\r\nX-Request-Id: probe-connect\r\n\r\n`,
      );
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
        status: 404,
        body: errors.routeNotFound,
      });
      expect(res.headers['x-request-id']).toBe('probe-connect');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('a Transfer-Encoding other than chunked is 415, after the token (gzip, chunked was read as text)', async () => {
    const send = (authorization: string) =>
      rawRequest(
        t,
        'POST /v2/customers HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
          `${authorization}Transfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n` +
          '2\r\n{}\r\n0\r\n\r\n',
      );
    const refused = await send(`Authorization: ${all}\r\n`);
    expect({ status: refused.status, body: JSON.parse(refused.body) }).toEqual({
      status: 415,
      body: {
        message: 'The request body must not be compressed (no Transfer-Encoding but chunked).',
      },
    });
    const anonymous = await send('');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toBe('Bearer realm="api"');
  });

  it('at /oauth/* such a body is 400 invalid_request with no-store, as any body it does not read', async () => {
    const res = await rawRequest(
      t,
      'POST /oauth/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        'Transfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
    );
    expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
      status: 400,
      // Every 415 there is RFC 6749's 400 for a body it cannot read (CONTRACT §3).
      body: oauthErrors.invalidRequest(
        'The request body must be JSON or application/x-www-form-urlencoded.',
      ),
    });
    expect(res.headers['cache-control']).toBe(noStore['cache-control']);
  });

  it('a NUL in a webhook id is 404 (a lookup by it is a 500 on PostgreSQL), after the token and the scope', async () => {
    const read = await authHeader(t, ['webhooks:read']);
    const found = await request(t.http).get('/v2/webhooks/a%00b').set('authorization', read);
    expect({ status: found.status, body: found.body }).toEqual({
      status: 404,
      body: {
        message:
          'Not found: the path holds a character no stored name has (NUL or an unpaired surrogate).',
      },
    });
    expect((await request(t.http).get('/v2/webhooks/a%00b')).status).toBe(401);
    expect((await request(t.http).get('/v2/webhooks/a%00b').set('authorization', all)).status).toBe(
      403,
    );
  });

  it("the docs' file server refusals say what failed (they were {message: 'Error.'})", async () => {
    const range = await request(t.http).get('/docs/swagger-ui.css').set('range', 'bytes=99999999-');
    expect({ status: range.status, body: range.body }).toEqual({
      status: 416,
      body: { message: 'The requested range is not within the file.' },
    });
    // The file's length, so that the client can ask again within it (RFC 9110 §15.5.17).
    const whole = await request(t.http).get('/docs/swagger-ui.css');
    expect(range.headers['content-range']).toBe(`bytes */${Buffer.byteLength(whole.text)}`);
    const precondition = await request(t.http)
      .get('/docs/swagger-ui.css')
      .set('if-match', '"nope"');
    expect({ status: precondition.status, body: precondition.body }).toEqual({
      status: 412,
      body: { message: 'A precondition in the request headers does not hold.' },
    });
  });

  describe('a query string of more than 100 parameters is refused, never cut short', () => {
    const tooMany = { message: 'The query string must not hold more than 100 parameters.' };
    // qs stopped reading after 100 pieces (empty ones too) and dropped the rest silently: a
    // filter or a limit after them was not applied, and the wrong list was answered 200.
    const padding = '&'.repeat(100);

    it('400 rather than a list without the filter sent after the 100th piece', async () => {
      const { read } = await senderHeaders(t);
      const res = await request(t.http)
        .get(`/v2/webhooks?${padding}status=bogus`)
        .set('authorization', read);
      expect({ status: res.status, body: res.body }).toEqual({
        status: 422,
        body: errors.invalid({ status: ['The status must be one of: processed, failed.'] }),
      });
    });

    it('empty pieces are not parameters; 101 real ones are 400', async () => {
      const params = Array.from({ length: 101 }, (_, i) => `p${i}=1`).join('&');
      const res = await request(t.http).get(`/v2/customers?${params}`).set('authorization', all);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: tooMany });
    });

    it('answered after the token, the scope and the customer, like a poisoned query', async () => {
      const params = Array.from({ length: 101 }, (_, i) => `p${i}=1`).join('&');
      const anonymous = await request(t.http).get(`/v2/customers?${params}`);
      expect({ status: anonymous.status, body: anonymous.body }).toEqual({
        status: 401,
        body: errors.unauthenticated,
      });
      const unknown = await request(t.http)
        .get(`/v2/customers/987654321/company?${params}`)
        .set('authorization', all);
      expect({ status: unknown.status, body: unknown.body }).toEqual({
        status: 404,
        body: errors.customerNotFound,
      });
    });

    it('at /oauth/* it is invalid_request', async () => {
      const client = await createClient(t, { grants: ['client_credentials'] });
      const params = Array.from({ length: 101 }, (_, i) => `p${i}=1`).join('&');
      const res = await request(t.http)
        .post(`/oauth/token?${params}`)
        .set('authorization', basicAuth(client.clientId, client.clientSecret))
        .type('form')
        .send({ grant_type: 'client_credentials', scope: 'customers:read' });
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: oauthErrors.invalidRequest(tooMany.message),
      });
    });

    it('100 parameters are read, all of them', async () => {
      const params = Array.from({ length: 99 }, () => 'result_mode[mode]=paginated').join('&');
      const res = await request(t.http)
        .get(`/v2/customers?${padding}${params}&result_mode[attributes][limit]=101`)
        .set('authorization', all);
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors)).toContain('result_mode.attributes.limit');
    });
  });
});
