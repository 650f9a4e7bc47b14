import request from 'supertest';
import { startTestApp, TestApp } from '../support/app.js';
import { errors } from '../support/responses.js';
import { EchoModule } from './echo.module.js';

describe('HTTP edges (docs/contract.md §2)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ imports: [EchoModule] });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers an unknown route 404 in the contract shape, whatever the method or body', async () => {
    const res = await request(t.http).get('/v2/nothing-here').expect(404);
    expect(res.body).toEqual(errors.routeNotFound);
    expect(res.headers['content-type']).toMatch(/^application\/json/);

    const post = await request(t.http)
      .post('/v2/nothing-here')
      .set('content-type', 'application/json')
      .send('{bad');
    expect(post.status).toBe(404);
    expect(post.body).toEqual(errors.routeNotFound);
  });

  it('wraps success bodies in {data} (a Page in {data, meta}); raw routes and errors are left as they are', async () => {
    const list = await request(t.http).get('/test/envelope/list').expect(200);
    expect(list.body).toStrictEqual({ data: [1, 2] });

    const page = await request(t.http).get('/test/envelope/page').expect(200);
    expect(page.body).toStrictEqual({
      data: [{ id: 3 }],
      meta: { current_page: 2, from: 11, to: 11, last_page: 3, per_page: 10, total: 21 },
    });

    // @RawResponse() on one method, and on a whole controller.
    const method = await request(t.http).get('/test/envelope/raw').expect(200);
    expect(method.body).toStrictEqual({ status: 'as is' });
    const controller = await request(t.http).get('/test/raw').expect(200);
    expect(controller.body).toStrictEqual({ status: 'as is' });

    const failed = await request(t.http).get('/test/boom').expect(500);
    expect(failed.body).toStrictEqual(errors.internal);
  });

  it('answers malformed JSON 400 without a stack trace', async () => {
    const res = await request(t.http)
      .post('/test/echo')
      .set('content-type', 'application/json')
      .send('{"a": ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errors.malformedJson);
  });

  it('answers a body over 1 MiB 413', async () => {
    const res = await request(t.http)
      .post('/test/echo')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ big: 'x'.repeat(1024 * 1024) }));
    expect(res.status).toBe(413);
    expect(res.body).toEqual(errors.tooLarge);
  });

  it.each([
    ['text/plain', 'hello'],
    ['application/xml', '<a/>'],
    ['application/x-www-form-urlencoded', 'a=1'],
  ])('answers a %s body 415', async (type, body) => {
    const res = await request(t.http).post('/test/echo').set('content-type', type).send(body);
    expect(res.status).toBe(415);
    expect(res.body).toEqual(errors.unsupportedMediaType);
  });

  it('validates with the 422 shape and dotted paths, refusing unknown fields', async () => {
    const res = await request(t.http)
      .post('/test/echo')
      .send({ name: 5, nested: { count: 'x' }, street: 'Main St' });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('The given data was invalid.');
    expect(Object.keys(res.body.errors).sort()).toEqual(['name', 'nested.count', 'street']);
    for (const messages of Object.values(res.body.errors)) {
      expect(Array.isArray(messages) && messages.length > 0).toBe(true);
    }
  });

  it('refuses a body that is not a JSON object with 422', async () => {
    const res = await request(t.http).post('/test/echo').send([1, 2]);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message: 'The given data was invalid.',
      errors: { body: ['The request body must be a JSON object.'] },
    });
  });

  it('answers a path parameter holding a NUL 404 before any handler sees it (PostgreSQL refuses it in a lookup: a 500)', async () => {
    const plain = await request(t.http).get('/test/items/a%20b');
    expect({ status: plain.status, body: plain.body }).toEqual({
      status: 200,
      body: { data: { name: 'a b' } },
    });
    const nul = await request(t.http).get('/test/items/a%00b');
    expect({ status: nul.status, body: nul.body }).toEqual({
      status: 404,
      body: {
        message:
          'Not found: the path holds a character no stored name has (NUL or an unpaired surrogate).',
      },
    });
  });

  it('hides unexpected errors behind a plain 500', async () => {
    const res = await request(t.http).get('/test/boom').expect(500);
    expect(res.body).toEqual(errors.internal);
    expect(JSON.stringify(res.body)).not.toMatch(/secret detail|at .*\.ts/);
  });

  it('sets X-Request-Id on every response, echoing a sane caller id only', async () => {
    const own = await request(t.http).get('/health').set('x-request-id', 'abc-123');
    expect(own.headers['x-request-id']).toBe('abc-123');
    const generated = await request(t.http).get('/nope').set('x-request-id', 'bad id\twith spaces');
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends security headers: an API set on JSON answers, the whole helmet set on the docs pages', async () => {
    const api = await request(t.http).get('/health');
    expect(api.headers).toMatchObject({
      'content-security-policy': "default-src 'none';frame-ancestors 'none'",
      'cross-origin-resource-policy': 'same-origin',
      'referrer-policy': 'no-referrer',
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
    });
    expect(api.headers['x-xss-protection']).toBeUndefined();
    expect(api.headers['access-control-allow-origin']).toBeUndefined();

    const docs = await request(t.http).get('/docs').expect(200);
    expect(docs.headers['content-security-policy']).toMatch(/script-src 'self' 'unsafe-inline'/);
    expect(docs.headers).toMatchObject({
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'SAMEORIGIN',
      'x-xss-protection': '0',
      'origin-agent-cluster': '?1',
    });
  });

  it('parses bracketed query strings into nested objects', async () => {
    const res = await request(t.http)
      .get('/test/query?result_mode%5Bmode%5D=paginated&result_mode%5Battributes%5D%5Bpage%5D=2')
      .expect(200);
    expect(res.body).toEqual({
      data: { result_mode: { mode: 'paginated', attributes: { page: '2' } } },
    });
  });

  it('refuses JSON nested deeper than 32 levels with 400, before any consumer recurses', async () => {
    const deep = '['.repeat(100000) + ']'.repeat(100000);
    const res = await request(t.http)
      .post('/test/echo')
      .set('content-type', 'application/json')
      .send(deep);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'The request body is nested deeper than 32 levels.' });
    const ok = '{"name":"x","nested":' + '{"count":1}' + '}';
    await request(t.http)
      .post('/test/echo')
      .set('content-type', 'application/json')
      .send(ok)
      .expect(201);
  });

  it('refuses prototype-poisoning keys with 400', async () => {
    const res = await request(t.http)
      .post('/test/echo')
      .set('content-type', 'application/json')
      .send('{"name":"x","__proto__":{"admin":true}}');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: 'The request body contains a forbidden "__proto__" or "constructor.prototype" key.',
    });
  });
});
