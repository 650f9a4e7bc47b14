import request from 'supertest';
import type { Customer } from '../../src/customers/customer.entity.js';
import { createCustomers, storedCustomer } from '../factories/customer.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { authHeader } from '../support/auth.js';
import { errors } from '../support/responses.js';

const PAGE = 'The page must be a positive integer.';
const LIMIT = 'The limit must be between 1 and 100.';
const MODE = 'The mode must be paginated.';
const NOT_AN_OBJECT = 'The result_mode must be an object: result_mode[mode]=paginated.';
const ATTRIBUTES_NOT_AN_OBJECT =
  'The attributes must be an object: result_mode[attributes][page]=….';

/** A query string as a client library sends it: brackets percent-encoded. */
function paged(params: Record<string, string>): string {
  return `/v2/customers?${new URLSearchParams(params)}`;
}

const item = (c: Customer) => ({
  id: c.id,
  company: { name: c.companyName, type: c.companyType },
});

describe('customers: GET /v2/customers (paged), GET /v2/customers/{id}, POST /v2/customers', () => {
  let t: TestApp;
  let read: string;
  let write: string;
  let customers: Customer[];
  beforeAll(async () => {
    t = await startTestApp();
    read = await authHeader(t, ['customers:read']);
    write = await authHeader(t, ['customers:write']);
    customers = await createCustomers(t, 42);
  });
  afterAll(async () => {
    await t.close();
  });

  describe('GET /v2/customers', () => {
    it('sends the brackets percent-encoded, as clients do', () => {
      expect(paged({ 'result_mode[mode]': 'paginated' })).toBe(
        '/v2/customers?result_mode%5Bmode%5D=paginated',
      );
    });

    it.each([
      // [page, limit, first index, last index (exclusive), meta]
      [1, 10, 0, 10, { current_page: 1, from: 1, to: 10, last_page: 5, per_page: 10, total: 42 }],
      [2, 10, 10, 20, { current_page: 2, from: 11, to: 20, last_page: 5, per_page: 10, total: 42 }],
      [4, 10, 30, 40, { current_page: 4, from: 31, to: 40, last_page: 5, per_page: 10, total: 42 }],
      [5, 10, 40, 42, { current_page: 5, from: 41, to: 42, last_page: 5, per_page: 10, total: 42 }],
      [3, 15, 30, 42, { current_page: 3, from: 31, to: 42, last_page: 3, per_page: 15, total: 42 }],
      [
        42,
        1,
        41,
        42,
        { current_page: 42, from: 42, to: 42, last_page: 42, per_page: 1, total: 42 },
      ],
      [1, 100, 0, 42, { current_page: 1, from: 1, to: 42, last_page: 1, per_page: 100, total: 42 }],
    ])('page %i of %i: exact data and meta', async (page, limit, start, end, meta) => {
      const res = await request(t.http)
        .get(
          paged({
            'result_mode[mode]': 'paginated',
            'result_mode[attributes][page]': String(page),
            'result_mode[attributes][limit]': String(limit),
          }),
        )
        .set('authorization', read);
      expect(res.status).toBe(200);
      expect(res.body).toStrictEqual({ data: customers.slice(start, end).map(item), meta });
    });

    it('answers a page past the end with no data, null positions and the page asked for', async () => {
      const res = await request(t.http)
        .get(
          paged({
            'result_mode[mode]': 'paginated',
            'result_mode[attributes][page]': '6',
            'result_mode[attributes][limit]': '10',
          }),
        )
        .set('authorization', read);
      expect(res.status).toBe(200);
      expect(res.body).toStrictEqual({
        data: [],
        meta: { current_page: 6, from: null, to: null, last_page: 5, per_page: 10, total: 42 },
      });
    });

    it('defaults to page 1 and limit 15, with or without result_mode', async () => {
      const meta = { current_page: 1, from: 1, to: 15, last_page: 3, per_page: 15, total: 42 };
      for (const url of [
        '/v2/customers',
        paged({ 'result_mode[mode]': 'paginated' }),
        paged({ 'result_mode[attributes][page]': '1' }),
      ]) {
        const res = await request(t.http).get(url).set('authorization', read);
        expect(res.status).toBe(200);
        expect(res.body).toStrictEqual({ data: customers.slice(0, 15).map(item), meta });
      }
      const limitOnly = await request(t.http)
        .get(paged({ 'result_mode[attributes][limit]': '40' }))
        .set('authorization', read);
      expect(limitOnly.body.meta).toStrictEqual({ ...meta, to: 40, last_page: 2, per_page: 40 });
    });

    it('reads the literal query a client sends, encoded or not', async () => {
      for (const query of [
        'result_mode%5Bmode%5D=paginated&result_mode%5Battributes%5D%5Bpage%5D=3&result_mode%5Battributes%5D%5Blimit%5D=2',
        'result_mode[mode]=paginated&result_mode[attributes][page]=3&result_mode[attributes][limit]=2',
      ]) {
        const res = await request(t.http).get(`/v2/customers?${query}`).set('authorization', read);
        expect(res.status).toBe(200);
        expect(res.body).toStrictEqual({
          data: customers.slice(4, 6).map(item),
          meta: { current_page: 3, from: 5, to: 6, last_page: 21, per_page: 2, total: 42 },
        });
      }
      const bad = await request(t.http)
        .get('/v2/customers?result_mode%5Battributes%5D%5Blimit%5D=101')
        .set('authorization', read);
      expect(bad.status).toBe(422);
      expect(bad.body).toStrictEqual(errors.invalid({ 'result_mode.attributes.limit': [LIMIT] }));
    });

    it.each<[string, string, Record<string, string[]>]>([
      ['page 0', 'result_mode[attributes][page]=0', { 'result_mode.attributes.page': [PAGE] }],
      ['page -1', 'result_mode[attributes][page]=-1', { 'result_mode.attributes.page': [PAGE] }],
      ['page 1.5', 'result_mode[attributes][page]=1.5', { 'result_mode.attributes.page': [PAGE] }],
      ['page abc', 'result_mode[attributes][page]=abc', { 'result_mode.attributes.page': [PAGE] }],
      [
        'an empty page',
        'result_mode[attributes][page]=',
        { 'result_mode.attributes.page': [PAGE] },
      ],
      [
        'a page given twice',
        'result_mode[attributes][page]=1&result_mode[attributes][page]=2',
        {
          'result_mode.attributes.page': [
            'The result_mode[attributes][page] parameter must be given once.',
          ],
        },
      ],
      [
        'a valid mode given twice',
        'result_mode[mode]=paginated&result_mode[mode]=paginated',
        { 'result_mode.mode': ['The result_mode[mode] parameter must be given once.'] },
      ],
      ['limit 0', 'result_mode[attributes][limit]=0', { 'result_mode.attributes.limit': [LIMIT] }],
      [
        'limit 101',
        'result_mode[attributes][limit]=101',
        { 'result_mode.attributes.limit': [LIMIT] },
      ],
      [
        'limit abc',
        'result_mode[attributes][limit]=abc',
        { 'result_mode.attributes.limit': [LIMIT] },
      ],
      ['mode cursor', 'result_mode[mode]=cursor', { 'result_mode.mode': [MODE] }],
      ['an empty mode', 'result_mode[mode]=', { 'result_mode.mode': [MODE] }],
      ['result_mode not an object', 'result_mode=paginated', { result_mode: [NOT_AN_OBJECT] }],
      ['result_mode an array', 'result_mode[]=paginated', { result_mode: [NOT_AN_OBJECT] }],
      [
        'attributes not an object',
        'result_mode[attributes]=2',
        { 'result_mode.attributes': [ATTRIBUTES_NOT_AN_OBJECT] },
      ],
      [
        'an unknown attribute',
        'result_mode[attributes][size]=2',
        {
          'result_mode.attributes.size': ['The result_mode.attributes.size field is not allowed.'],
        },
      ],
      ['an unknown parameter', 'sort=name', { sort: ['The sort field is not allowed.'] }],
      [
        'every field wrong at once',
        'result_mode[mode]=all&result_mode[attributes][page]=0&result_mode[attributes][limit]=500',
        {
          'result_mode.mode': [MODE],
          'result_mode.attributes.page': [PAGE],
          'result_mode.attributes.limit': [LIMIT],
        },
      ],
    ])('answers 422 for %s, naming the field', async (_, query, expected) => {
      const encoded = new URLSearchParams(query).toString();
      const res = await request(t.http).get(`/v2/customers?${encoded}`).set('authorization', read);
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors).sort()).toEqual(Object.keys(expected).sort());
      expect(res.body).toStrictEqual(errors.invalid(expected));
    });

    it('answers 401 without a valid token and 403 without customers:read, before the query', async () => {
      const missing = await request(t.http).get('/v2/customers?result_mode[mode]=bad');
      expect(missing.status).toBe(401);
      expect(missing.headers['www-authenticate']).toBe('Bearer realm="api"');

      const garbage = await request(t.http)
        .get('/v2/customers')
        .set('authorization', 'Bearer garbage');
      expect(garbage.status).toBe(401);
      expect(garbage.headers['www-authenticate']).toBe('Bearer realm="api", error="invalid_token"');

      const wrongScope = await request(t.http)
        .get('/v2/customers?result_mode[mode]=bad')
        .set('authorization', write);
      expect(wrongScope.status).toBe(403);
      expect(wrongScope.headers['www-authenticate']).toBe(
        'Bearer realm="api", error="insufficient_scope", scope="customers:read"',
      );
    });
  });

  describe('GET /v2/customers/{customer_id}', () => {
    it('answers one customer, retail ones with a null company', async () => {
      for (const customer of customers.slice(0, 3)) {
        const res = await request(t.http)
          .get(`/v2/customers/${customer.id}`)
          .set('authorization', read);
        expect(res.status).toBe(200);
        expect(res.body).toStrictEqual({ data: item(customer) });
      }
      expect(customers[2]).toMatchObject({ companyName: null, companyType: null });
    });

    it.each(['abc', '0', '-1', '1.5', '01', '99999999999999999999', '4242'])(
      'answers 404 for %s',
      async (id) => {
        const res = await request(t.http).get(`/v2/customers/${id}`).set('authorization', read);
        expect(res.status).toBe(404);
        expect(res.body).toStrictEqual(errors.customerNotFound);
      },
    );

    it('answers 401 and 403 before 404', async () => {
      expect((await request(t.http).get('/v2/customers/abc')).status).toBe(401);
      const res = await request(t.http).get('/v2/customers/abc').set('authorization', write);
      expect(res.status).toBe(403);
    });
  });

  describe('POST /v2/customers', () => {
    const total = async () =>
      (await request(t.http).get('/v2/customers').set('authorization', read)).body.meta.total;

    it('creates a customer with a company: 201 with the item, stored and counted', async () => {
      const before = await total();
      const res = await request(t.http)
        .post('/v2/customers')
        .set('authorization', write)
        .send({ company: { name: 'Globex plc', type: 'plc' } });
      expect(res.status).toBe(201);
      expect(res.body).toStrictEqual({
        data: { id: expect.any(Number), company: { name: 'Globex plc', type: 'plc' } },
      });
      expect(await storedCustomer(t, res.body.data.id)).toMatchObject({
        companyName: 'Globex plc',
        companyType: 'plc',
      });
      expect(await total()).toBe(before + 1);

      const company = await request(t.http)
        .get(`/v2/customers/${res.body.data.id}/company`)
        .set('authorization', read);
      expect(company.body).toStrictEqual({ data: { name: 'Globex plc', type: 'plc' } });
    });

    it.each([
      ['without company', {}],
      ['with a null company', { company: null }],
      ['with an empty company', { company: {} }],
      ['with a null name and type', { company: { name: null, type: null } }],
    ])('creates a retail customer %s, which round-trips as nulls', async (_, body) => {
      const res = await request(t.http)
        .post('/v2/customers')
        .set('authorization', write)
        .send(body);
      expect(res.status).toBe(201);
      const { id } = res.body.data;
      expect(res.body).toStrictEqual({ data: { id, company: { name: null, type: null } } });
      expect(await storedCustomer(t, id)).toMatchObject({ companyName: null, companyType: null });

      const one = await request(t.http).get(`/v2/customers/${id}`).set('authorization', read);
      expect(one.body).toStrictEqual({ data: { id, company: { name: null, type: null } } });
      const company = await request(t.http)
        .get(`/v2/customers/${id}/company`)
        .set('authorization', read);
      expect(company.body).toStrictEqual({ data: { name: null, type: null } });
    });

    it('creates a company with a name only or a type only, the other null', async () => {
      const named = await request(t.http)
        .post('/v2/customers')
        .set('authorization', write)
        .send({ company: { name: 'Named' } });
      expect(named.body.data.company).toStrictEqual({ name: 'Named', type: null });
      const typed = await request(t.http)
        .post('/v2/customers')
        .set('authorization', write)
        .send({ company: { type: 'charity' } });
      expect(typed.body.data.company).toStrictEqual({ name: null, type: 'charity' });
    });

    it('gives concurrent creations distinct ids and counts every one', async () => {
      const before = await total();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          request(t.http)
            .post('/v2/customers')
            .set('authorization', write)
            .send({ company: { name: `Parallel ${i}`, type: 'llp' } }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
      expect(new Set(results.map((r) => r.body.data.id)).size).toBe(10);
      expect(await total()).toBe(before + 10);
    });

    it.each<[string, unknown, Record<string, string[]>]>([
      [
        'company not an object',
        { company: 'Acme' },
        { company: ['The company must be an object.'] },
      ],
      [
        'an unknown company type',
        { company: { name: 'Acme', type: 'ltd' } },
        {
          'company.type': [
            'The type must be one of: undefined, private, sole-trader, limited-company, llp, partnership, plc, charity, local-authority.',
          ],
        },
      ],
      [
        'an empty name',
        { company: { name: '' } },
        { 'company.name': ['The name must be between 1 and 255 characters.'] },
      ],
      [
        'an unknown field in company',
        { company: { name: 'Acme', street: 'Main St' } },
        { 'company.street': ['The company.street field is not allowed.'] },
      ],
      [
        'an unknown top-level field',
        { name: 'Acme' },
        { name: ['The name field is not allowed.'] },
      ],
      ['no body object', [], { body: ['The request body must be a JSON object.'] }],
    ])('answers 422 for %s, creating nothing', async (_, body, expected) => {
      const before = await total();
      const res = await request(t.http)
        .post('/v2/customers')
        .set('authorization', write)
        .set('content-type', 'application/json')
        .send(JSON.stringify(body));
      expect(res.status).toBe(422);
      expect(res.body).toStrictEqual(errors.invalid(expected));
      expect(await total()).toBe(before);
    });

    it('keeps the paged total equal to COUNT(*) after every creation above', async () => {
      const [{ n }] = await t.db.query('SELECT COUNT(*) AS n FROM customers');
      expect(await total()).toBe(Number(n));
    });

    it('answers 401 without a token and 403 without customers:write, before the body', async () => {
      const missing = await request(t.http).post('/v2/customers').send({ company: 'x' });
      expect(missing.status).toBe(401);
      expect(missing.headers['www-authenticate']).toBe('Bearer realm="api"');
      const wrongScope = await request(t.http)
        .post('/v2/customers')
        .set('authorization', read)
        .send({ company: 'x' });
      expect(wrongScope.status).toBe(403);
      expect(wrongScope.headers['www-authenticate']).toBe(
        'Bearer realm="api", error="insufficient_scope", scope="customers:write"',
      );
    });
  });
});
