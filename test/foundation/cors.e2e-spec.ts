import request from 'supertest';
import { startTestApp, TestApp } from '../support/app.js';
import { errors } from '../support/responses.js';

describe('CORS with CORS_ORIGINS set', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { CORS_ORIGINS: 'https://a.example,https://b.example' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers a preflight for PUT from a listed origin, and nothing for another origin', async () => {
    const allowed = await request(t.http)
      .options('/v2/customers/1/company')
      .set('origin', 'https://b.example')
      .set('access-control-request-method', 'PUT')
      .set('access-control-request-headers', 'authorization,content-type')
      .expect(200);
    expect(allowed.text).toBe('');
    expect(allowed.headers['access-control-allow-origin']).toBe('https://b.example');
    // Like every other answer: an id to quote, and the security headers.
    expect(allowed.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(allowed.headers['x-content-type-options']).toBe('nosniff');
    expect(allowed.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, PUT');
    expect(allowed.headers['access-control-allow-headers']).toBe('authorization,content-type');

    const other = await request(t.http)
      .options('/v2/customers/1/company')
      .set('origin', 'https://evil.example')
      .set('access-control-request-method', 'PUT');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('reads no body of an OPTIONS request over 16 KiB (a preflight has none): 413, not parsed', async () => {
    const tooLarge = 'The request body is larger than 16 KiB.';
    for (const [path, body] of [
      ['/oauth/token', { error: 'invalid_request', error_description: tooLarge }],
      ['/v2/customers/1/company', { message: tooLarge }],
    ] as const) {
      const res = await request(t.http)
        .options(path)
        .set('content-type', 'application/json')
        // Malformed too: had it been parsed, the answer would be 400.
        .send(`[${'{},'.repeat(6_000)}`);
      expect([path, res.status, res.body]).toEqual([path, 413, body]);
    }
  });

  it('answers an OPTIONS request that is no preflight as it answers one, not with a plain-text 400', async () => {
    const res = await request(t.http).options('/v2/customers/1/company').expect(200);
    expect(res.text).toBe('');
    expect(res.headers['content-type']).toBeUndefined();
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, PUT');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  // Nest runs @fastify/cors's hook before every other one: a refusal made in a later hook (the
  // bearer header check, before the body) still carries the CORS headers.
  it('lets a listed origin read a refusal made before the body', async () => {
    const res = await request(t.http)
      .put('/v2/customers/1/company')
      .set('origin', 'https://a.example')
      .send({ name: 'x' })
      .expect(401);
    expect(res.headers['access-control-allow-origin']).toBe('https://a.example');
    expect(res.body).toEqual(errors.unauthenticated);
  });

  it('marks answers to a listed origin', async () => {
    const res = await request(t.http).get('/health').set('origin', 'https://a.example').expect(200);
    expect(res.headers['access-control-allow-origin']).toBe('https://a.example');
    // A browser script may read the request id, Retry-After and a 401's challenge.
    expect(res.headers['access-control-expose-headers']).toBe(
      'X-Request-Id, Retry-After, WWW-Authenticate',
    );
  });
});
