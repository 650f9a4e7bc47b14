import request from 'supertest';
import { basicAuth, createClient, createUser, issueToken } from '../factories/client.factory.js';
import { createCustomer } from '../factories/customer.factory.js';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';
import { rawRequest } from '../support/raw-http.js';
import { bearerChallenges, errors, oauthErrors } from '../support/responses.js';

/** The reproductions of the third outside review (CONTRACT §2), one test each. */
describe('Third outside review (CONTRACT §2)', () => {
  let t: TestApp;
  let all: string;
  let readOnly: string;
  beforeAll(async () => {
    t = await startTestApp();
    all = await authHeader(t, ['customers:read', 'customers:write']);
    readOnly = await authHeader(t, ['customers:read']);
  });
  afterAll(async () => {
    await t.close();
  });

  const poisonedQuery = {
    message: 'The query string contains a forbidden "__proto__" or "constructor.prototype" key.',
  };

  it('a form body of one key repeated is refused as repeated, and one of 1 MiB is not parsed', async () => {
    // Parsing copied the array on every repeat: minutes of CPU for 1 MiB, every other request
    // waiting. Such a body is now over the OAuth endpoints' 16 KiB (413, unread).
    const client = await createClient(t, { grants: ['client_credentials'] });
    const post = (body: string) =>
      request(t.http)
        .post('/oauth/token')
        .set('authorization', basicAuth(client.clientId, client.clientSecret))
        .set('content-type', 'application/x-www-form-urlencoded')
        .send(body);
    const repeated = await post(`grant_type=client_credentials${'&grant_type=x'.repeat(1_200)}`);
    expect({ status: repeated.status, body: repeated.body }).toEqual({
      status: 400,
      body: oauthErrors.repeatedParameter('grant_type'),
    });
    const large = await post(`grant_type=client_credentials${'&grant_type=x'.repeat(80_000)}`);
    expect({ status: large.status, body: large.body }).toEqual({
      status: 413,
      body: oauthErrors.tooLarge,
    });
  });

  describe('a __proto__ query key is answered after the token, the scope and the customer', () => {
    it('401 with a bad token, whatever the query', async () => {
      const customer = await createCustomer(t, { name: 'A', type: 'plc' });
      const res = await request(t.http)
        .get(`/v2/customers/${customer.id}/company?__proto__=1`)
        .set('authorization', 'Bearer garbage');
      expect({ status: res.status, body: res.body }).toEqual({
        status: 401,
        body: errors.invalidToken,
      });
      expect(res.headers['www-authenticate']).toBe(bearerChallenges.invalidToken);
    });

    it('403 without the scope', async () => {
      const customer = await createCustomer(t, { name: 'A', type: 'plc' });
      const res = await request(t.http)
        .put(`/v2/customers/${customer.id}/company?__proto__=1`)
        .set('authorization', readOnly)
        .send({ name: 'B' });
      expect({ status: res.status, body: res.body }).toEqual({
        status: 403,
        body: errors.insufficientScope,
      });
    });

    it.each([
      ['GET company', 'get', '/company'],
      ['PUT company', 'put', '/company'],
      ['GET customer', 'get', ''],
    ] as const)('404 for an unknown customer (%s)', async (_name, method, suffix) => {
      const agent = request(t.http);
      const res = await agent[method](`/v2/customers/987654321${suffix}?__proto__=1`).set(
        'authorization',
        all,
      );
      expect({ status: res.status, body: res.body }).toEqual({
        status: 404,
        body: errors.customerNotFound,
      });
    });

    it('then 400', async () => {
      const customer = await createCustomer(t, { name: 'A', type: 'plc' });
      const res = await request(t.http)
        .get(`/v2/customers/${customer.id}/company?__proto__=1`)
        .set('authorization', all);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: poisonedQuery });
    });
  });

  it.each(['__pr%6Fto__[x]=1', 'result_mode[__pr%6Fto__][x]=1', 'constructor[pr%6Ftotype][x]=1'])(
    'a percent-encoded prototype key in a query is 400 too: %s',
    async (query) => {
      const res = await request(t.http).get(`/v2/customers?${query}`).set('authorization', all);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: poisonedQuery });
    },
  );

  it('a __proto__ query key at /oauth/* is 400 invalid_request', async () => {
    const client = await createClient(t, { grants: ['client_credentials'] });
    const res = await request(t.http)
      .post('/oauth/token?__proto__[x]=1')
      .set('authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send({ grant_type: 'client_credentials', scope: 'customers:read' });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 400,
      body: oauthErrors.invalidRequest(poisonedQuery.message),
    });
  });

  it('a 422 names at most 100 fields, the first ones found (the answer stays small)', async () => {
    const auth = await authHeader(t, ['webhooks:write']);
    const payload: Record<string, string> = { user_id: 'x', module_id: 'x', attempt_id: 'x' };
    for (let i = 0; i < 5000; i++) payload[`f${i}`] = `bad\u0000`;
    const res = await request(t.http)
      .post('/v2/webhooks')
      .set('authorization', auth)
      .send({ event: 'learning.attempt.completed', payload });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('The given data was invalid.');
    const fields = Object.keys(res.body.errors);
    expect(fields).toHaveLength(100);
    for (const field of fields) expect(field).toMatch(/^payload\./);
  });

  it('a token is valid under one spelling only: padding or unused bits changed are 401', async () => {
    const client = await createClient(t, { grants: ['client_credentials'] });
    const token = await issueToken(t, client, ['customers:read']);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(token.at(-1)!);
    // Signatures of 256 (RS256) or 64 bytes (ES256, EdDSA) leave the last character 4 unused bits.
    expect([256, 64]).toContain(Buffer.from(token.split('.')[2], 'base64url').length);
    for (const variant of [`${token}==`, `${token.slice(0, -1)}${alphabet[last ^ 1]}`]) {
      expect(Buffer.from(variant.split('.')[2], 'base64url')).toEqual(
        Buffer.from(token.split('.')[2], 'base64url'),
      );
      const res = await request(t.http)
        .get('/v2/customers')
        .set('authorization', `Bearer ${variant}`);
      expect({ status: res.status, body: res.body }).toEqual({
        status: 401,
        body: errors.invalidToken,
      });
    }
    const res = await request(t.http).get('/v2/customers').set('authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);
  });

  it('every GET route answers HEAD with the same status and headers, and no body (contract §1)', async () => {
    const customer = await createCustomer(t, { name: 'A', type: 'plc' });
    for (const [path, auth] of [
      [`/v2/customers/${customer.id}/company`, all],
      ['/v2/customers/987654321/company', all],
      ['/v2/customers', undefined],
    ] as const) {
      const get = request(t.http).get(path);
      const head = request(t.http).head(path);
      if (auth) {
        get.set('authorization', auth);
        head.set('authorization', auth);
      }
      const [g, h] = await Promise.all([get, head]);
      expect(h.status).toBe(g.status);
      expect(h.headers['content-type']).toBe(g.headers['content-type']);
      expect(h.headers['www-authenticate']).toBe(g.headers['www-authenticate']);
      expect(h.text ?? '').toBe('');
    }
  });

  it('an empty body of any content type is no body; a non-empty one of another type is 415', async () => {
    const empty = await request(t.http)
      .post('/v2/customers')
      .set('authorization', all)
      .set('content-type', 'text/plain')
      .send('');
    expect(empty.status).toBe(201);
    expect(empty.body.data.company).toEqual({ name: null, type: null });
    for (const type of ['text/plain', 'application/xml', 'application/octet-stream']) {
      const res = await request(t.http)
        .post('/v2/customers')
        .set('authorization', all)
        .set('content-type', type)
        .send('x');
      expect({ status: res.status, body: res.body }).toEqual({
        status: 415,
        body: { message: 'The request body must be JSON (Content-Type: application/json).' },
      });
    }
    // And a token is still checked first.
    const anonymous = await request(t.http)
      .post('/v2/customers')
      .set('content-type', 'text/plain')
      .send('x');
    expect(anonymous.status).toBe(401);
  });

  it('an Expect header other than 100-continue is 417 in the contract shape, with an id', async () => {
    for (const [sent, id] of [
      ['', /^[0-9a-f-]{36}$/],
      ['X-Request-Id: probe-417\r\n', /^probe-417$/],
    ] as const) {
      const res = await rawRequest(
        t,
        `GET /v2/customers HTTP/1.1\r\nHost: x\r\nExpect: foo\r\n${sent}Connection: close\r\n\r\n`,
      );
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
        status: 417,
        body: { message: 'The Expect header may only be 100-continue.' },
      });
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['x-request-id']).toMatch(id);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
    // Answered before Fastify reads the target: in absolute form too (RFC 9112 §3.2.2).
    for (const target of ['/oauth/token', 'http://x/oauth/token']) {
      const oauth = await rawRequest(
        t,
        `POST ${target} HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      );
      expect({ target, status: oauth.status, body: JSON.parse(oauth.body) }).toEqual({
        target,
        status: 417,
        body: oauthErrors.invalidRequest('The Expect header may only be 100-continue.'),
      });
      expect(oauth.headers['cache-control']).toBe('no-store');
    }
  });

  it('a grant this server does not support is unsupported_grant_type, with or without scope', async () => {
    const client = await createClient(t, { grants: ['client_credentials'] });
    for (const form of [
      'grant_type=refresh_token&refresh_token=x',
      'grant_type=refresh_token&refresh_token=x&scope=customers:read',
    ]) {
      const res = await request(t.http)
        .post('/oauth/token')
        .set('authorization', basicAuth(client.clientId, client.clientSecret))
        .type('form')
        .send(form);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('unsupported_grant_type');
    }
  });

  describe('a NUL or an unpaired surrogate in an OAuth parameter is 400 invalid_request', () => {
    it('in the password grant username (JSON), not invalid_grant', async () => {
      const client = await createClient(t);
      const user = await createUser(t);
      const res = await request(t.http)
        .post('/oauth/token')
        .set('authorization', basicAuth(client.clientId, client.clientSecret))
        .send({
          grant_type: 'password',
          scope: 'customers:read',
          username: `${user.username}\u0000`,
          password: user.password,
        });
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: oauthErrors.invalidRequest('The username must not contain NUL characters.'),
      });
    });

    it('in grant_type (form), not unsupported_grant_type', async () => {
      const client = await createClient(t, { grants: ['client_credentials'] });
      const res = await request(t.http)
        .post('/oauth/token')
        .set('authorization', basicAuth(client.clientId, client.clientSecret))
        .type('form')
        .send('grant_type=client_credentials%00&scope=customers:read');
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: oauthErrors.invalidRequest('The grant_type must not contain NUL characters.'),
      });
    });

    it('in client_id (JSON), not invalid_client', async () => {
      const res = await request(t.http)
        .post('/oauth/token')
        .set('content-type', 'application/json')
        .send('{"grant_type":"client_credentials","client_id":"\\ud800","client_secret":"x"}');
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: oauthErrors.invalidRequest(
          'The client_id must not contain unpaired surrogates (\\ud800 to \\udfff).',
        ),
      });
    });
  });
});
