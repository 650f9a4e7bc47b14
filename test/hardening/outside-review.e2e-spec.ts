import request from 'supertest';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { createCustomer, storedCustomer } from '../factories/customer.factory.js';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';
import { bearerChallenges, errors } from '../support/responses.js';

/** The /v2 reproductions of the third outside review (CONTRACT §2, §5, §7), one test each. */
describe('Outside review: order of checks and odd bodies (CONTRACT §2)', () => {
  let t: TestApp;
  let all: string;
  let readOnly: string;
  beforeAll(async () => {
    t = await startTestApp();
    all = await authHeader(t, ['customers:read', 'customers:write', 'webhooks:write']);
    readOnly = await authHeader(t, ['customers:read']);
  });
  afterAll(async () => {
    await t.close();
  });

  /** A customer whose company a refused PUT must leave as it is. */
  const customerBefore = () => createCustomer(t, { name: 'Before', type: 'plc' });
  const putCompany = (id: number, auth: string) =>
    request(t.http).put(`/v2/customers/${id}/company`).set('authorization', auth);

  const over1MiB = JSON.stringify({ name: 'x'.repeat(1024 * 1024) });
  /** Bodies Fastify refuses before the route runs: [what, content type, body]. */
  const refusedBodies = [
    ['a malformed body', 'application/json', '{'],
    ['a body over 1 MiB', 'application/json', over1MiB],
    ['a content type the API does not read', 'text/plain', 'name=A'],
  ];

  describe('the scope (403) is decided before the body is read', () => {
    it.each(refusedBodies)('PUT company with %s', async (_what, type, body) => {
      const customer = await customerBefore();
      const res = await putCompany(customer.id, readOnly).set('content-type', type).send(body);
      expect([res.status, res.body]).toStrictEqual([403, errors.insufficientScope]);
      expect(res.headers['www-authenticate']).toBe(
        bearerChallenges.insufficientScope('customers:write'),
      );
    });

    it('POST /v2/webhooks with a malformed body', async () => {
      const res = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', readOnly)
        .set('content-type', 'application/json')
        .send('{');
      expect([res.status, res.body]).toStrictEqual([403, errors.insufficientScope]);
      expect(res.headers['www-authenticate']).toBe(
        bearerChallenges.insufficientScope('webhooks:write'),
      );
    });
  });

  describe('an unknown customer (404) is decided before a refused body', () => {
    it.each(refusedBodies)('PUT company of no customer with %s', async (_what, type, body) => {
      const res = await putCompany(987654321, all).set('content-type', type).send(body);
      expect([res.status, res.body]).toStrictEqual([404, errors.customerNotFound]);
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
    });

    it('a known customer still gets the body refusal', async () => {
      const customer = await customerBefore();
      const res = await putCompany(customer.id, all)
        .set('content-type', 'application/json')
        .send('{');
      expect([res.status, res.body]).toStrictEqual([400, errors.malformedJson]);
    });
  });

  describe('no body at all is an empty object', () => {
    const bothMissing = errors.invalid({
      name: ['The name field is required when type is not present.'],
      type: ['The type field is required when name is not present.'],
    });

    it('PUT company with Content-Type: application/json and no bytes names name and type', async () => {
      const customer = await customerBefore();
      const res = await putCompany(customer.id, all).set('content-type', 'application/json');
      expect([res.status, res.body]).toStrictEqual([422, bothMissing]);
      expect((await storedCustomer(t, customer.id))?.companyName).toBe('Before');
    });

    it('PUT company with no body and no Content-Type names name and type', async () => {
      const customer = await customerBefore();
      const res = await putCompany(customer.id, all);
      expect([res.status, res.body]).toStrictEqual([422, bothMissing]);
    });

    it('POST /v2/customers with no body makes a retail customer', async () => {
      const res = await request(t.http)
        .post('/v2/customers')
        .set('authorization', all)
        .set('content-type', 'application/json');
      expect(res.status).toBe(201);
      expect(res.body).toStrictEqual({
        data: { id: expect.any(Number), company: { name: null, type: null } },
      });
    });

    it('POST /v2/webhooks with no body names event and payload', async () => {
      const res = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', all)
        .set('content-type', 'application/json');
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors).sort()).toEqual(['event', 'payload']);
      expect(res.body).toStrictEqual(
        errors.invalid({
          event: ['The event field is required.'],
          payload: ['The payload field is required.'],
        }),
      );
    });
  });

  describe('text that cannot be stored as sent is refused, never changed', () => {
    it('bytes that are not UTF-8 are 415', async () => {
      const customer = await customerBefore();
      const res = await putCompany(customer.id, all)
        .set('content-type', 'application/json')
        // As the bytes are, not as JSON of a Buffer object.
        .serialize((bytes: Buffer) => bytes as unknown as string)
        .send(Buffer.from([...Buffer.from('{"name":"a'), 0xff, 0xfe, ...Buffer.from('b"}')]));
      expect([res.status, res.body]).toStrictEqual([
        415,
        { message: 'The request body must be UTF-8 text.' },
      ]);
      expect((await storedCustomer(t, customer.id))?.companyName).toBe('Before');
    });

    it.each([
      [
        'a compressed body',
        { 'content-encoding': 'gzip' },
        'The request body must not be compressed (no Content-Encoding).',
      ],
      [
        'a second, other charset',
        { 'content-type': 'application/json; charset=utf-8; charset=latin1' },
        'The request body must be UTF-8 (charset=utf-8).',
      ],
    ])('%s is 415, not read as text', async (_what, headers, message) => {
      const customer = await customerBefore();
      const res = await putCompany(customer.id, all)
        .set('content-type', 'application/json')
        .set(headers)
        .send('{"name":"After"}');
      expect([res.status, res.body]).toStrictEqual([415, { message }]);
      expect((await storedCustomer(t, customer.id))?.companyName).toBe('Before');
    });

    it('an unpaired surrogate escape is 422 naming the field', async () => {
      const customer = await customerBefore();
      const res = await putCompany(customer.id, all)
        .set('content-type', 'application/json')
        .send('{"name":"a\\ud800b"}');
      expect([res.status, res.body]).toStrictEqual([
        422,
        errors.invalid({
          name: ['The name must not contain unpaired surrogates (\\ud800 to \\udfff).'],
        }),
      ]);
      expect((await storedCustomer(t, customer.id))?.companyName).toBe('Before');
    });

    it('a paired surrogate escape (an emoji) is stored as sent', async () => {
      const customer = await customerBefore();
      const res = await putCompany(customer.id, all)
        .set('content-type', 'application/json')
        .send('{"name":"a\\ud83d\\ude00b"}');
      expect([res.status, res.body.data.name]).toStrictEqual([200, 'a\u{1F600}b']);
      expect((await storedCustomer(t, customer.id))?.companyName).toBe('a\u{1F600}b');
    });

    it('an unpaired surrogate in a kept, unknown payload field is 422', async () => {
      const body = JSON.stringify(attemptCompleted()).replace(
        '"payload":{',
        '"payload":{"note":"\\udc00",',
      );
      const res = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', all)
        .set('content-type', 'application/json')
        .send(body);
      expect([res.status, res.body]).toStrictEqual([
        422,
        errors.invalid({
          'payload.note': [
            'The payload.note must not contain unpaired surrogates (\\ud800 to \\udfff).',
          ],
        }),
      ]);
    });
  });

  describe('pages', () => {
    const pageQuery = (page: string) =>
      `/v2/customers?result_mode[attributes][page]=${page}&result_mode[attributes][limit]=1`;

    it('a 16-digit page is a page past the end', async () => {
      const res = await request(t.http)
        .get(pageQuery('1000000000000000'))
        .set('authorization', all);
      expect(res.status).toBe(200);
      expect(res.body.data).toStrictEqual([]);
      expect(res.body.meta).toMatchObject({ current_page: 1000000000000000, from: null, to: null });
    });

    it.each(['9007199254740992', '123456789012345678901234567890'])(
      'page %s, past the largest exact number, is 422 saying so',
      async (page) => {
        const res = await request(t.http).get(pageQuery(page)).set('authorization', all);
        expect([res.status, res.body]).toStrictEqual([
          422,
          errors.invalid({
            'result_mode.attributes.page': ['The page must be at most 9007199254740991.'],
          }),
        ]);
      },
    );
  });

  it('a __proto__ query key is 400 on a route that reads no query', async () => {
    const customer = await createCustomer(t);
    const res = await request(t.http)
      .get(`/v2/customers/${customer.id}/company?__proto__[polluted]=1`)
      .set('authorization', all);
    expect([res.status, res.body]).toStrictEqual([
      400,
      {
        message:
          'The query string contains a forbidden "__proto__" or "constructor.prototype" key.',
      },
    ]);
  });
});
