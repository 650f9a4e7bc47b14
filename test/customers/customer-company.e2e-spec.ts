import request from 'supertest';
import { Customer } from '../../src/customers/customer.entity.js';
import { CustomersRepository } from '../../src/customers/customers.repository.js';
import { Database } from '../../src/database/index.js';
import { createCustomer, storedCustomer } from '../factories/customer.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { authHeader } from '../support/auth.js';
import { errors } from '../support/responses.js';

const TYPES =
  'undefined, private, sole-trader, limited-company, llp, partnership, plc, charity, local-authority';

/** Ids that are not canonical positive integers, or that no customer can have. */
const NOT_CUSTOMER_IDS = [
  'abc',
  '0',
  '-1',
  '1.5',
  '01',
  '1e3',
  '99999999999999999999',
  '9007199254740991',
  '2147483648',
  '999999',
];

describe('customer company: GET and PUT /v2/customers/{customer_id}/company', () => {
  let t: TestApp;
  let read: string;
  let write: string;
  beforeAll(async () => {
    t = await startTestApp();
    read = await authHeader(t, ['customers:read']);
    write = await authHeader(t, ['customers:write']);
  });
  afterAll(async () => {
    await t.close();
  });

  const company = (id: number | string) => `/v2/customers/${id}/company`;

  describe('GET', () => {
    it('answers the company in a data envelope', async () => {
      const customer = await createCustomer(t, { name: 'Acme Ltd', type: 'limited-company' });
      const res = await request(t.http).get(company(customer.id)).set('authorization', read);
      expect(res.status).toBe(200);
      expect(res.body).toStrictEqual({ data: { name: 'Acme Ltd', type: 'limited-company' } });
    });

    it('answers null name and type for a retail customer', async () => {
      const retail = await createCustomer(t, { name: null, type: null });
      const res = await request(t.http).get(company(retail.id)).set('authorization', read);
      expect(res.status).toBe(200);
      expect(res.body).toStrictEqual({ data: { name: null, type: null } });
    });

    it('answers each of many concurrent reads with its own customer', async () => {
      const customers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          createCustomer(t, { name: `Batch ${i}`, type: 'charity' }),
        ),
      );
      // Out of id order, with repeats and ids no customer has, all in flight at once.
      const ids = [
        ...customers.map((c) => c.id).reverse(),
        customers[2].id,
        2147483647,
        customers[5].id,
        2147483646,
      ];
      const answers = await Promise.all(
        ids.map((id) => request(t.http).get(company(id)).set('authorization', read)),
      );
      answers.forEach((res, i) => {
        const customer = customers.find((c) => c.id === ids[i]);
        if (customer) {
          expect([res.status, res.body]).toStrictEqual([
            200,
            { data: { name: customer.companyName, type: 'charity' } },
          ]);
        } else {
          expect([res.status, res.body]).toStrictEqual([404, errors.customerNotFound]);
        }
      });
    });

    it.each(NOT_CUSTOMER_IDS)('answers 404 for customer id %s', async (id) => {
      const res = await request(t.http).get(company(id)).set('authorization', read);
      expect(res.status).toBe(404);
      expect(res.body).toStrictEqual(errors.customerNotFound);
    });
  });

  describe('PUT', () => {
    it('changes only the fields present and answers the stored values', async () => {
      const { id } = await createCustomer(t, { name: 'Acme Ltd', type: 'limited-company' });
      const put = (body: object) =>
        request(t.http).put(company(id)).set('authorization', write).send(body);

      let res = await put({ name: 'Acme Holdings' });
      expect(res.status).toBe(200);
      expect(res.body).toStrictEqual({ data: { name: 'Acme Holdings', type: 'limited-company' } });
      expect(await storedCustomer(t, id)).toMatchObject({
        companyName: 'Acme Holdings',
        companyType: 'limited-company',
      });

      res = await put({ type: 'plc' });
      expect(res.body).toStrictEqual({ data: { name: 'Acme Holdings', type: 'plc' } });

      res = await put({ name: null });
      expect(res.body).toStrictEqual({ data: { name: null, type: 'plc' } });

      res = await put({ name: 'Both', type: 'llp' });
      expect(res.body).toStrictEqual({ data: { name: 'Both', type: 'llp' } });
      expect(await storedCustomer(t, id)).toMatchObject({
        companyName: 'Both',
        companyType: 'llp',
      });

      const read_ = await request(t.http).get(company(id)).set('authorization', read);
      expect(read_.body).toStrictEqual({ data: { name: 'Both', type: 'llp' } });
    });

    it('keeps both changes of two concurrent PUTs of different fields', async () => {
      const { id } = await createCustomer(t, { name: 'Start', type: 'private' });
      const types = ['plc', 'llp', 'charity', 'partnership', 'sole-trader'] as const;
      for (const [round, type] of types.entries()) {
        const name = `Round ${round}`;
        const [a, b] = await Promise.all([
          request(t.http).put(company(id)).set('authorization', write).send({ name }),
          request(t.http).put(company(id)).set('authorization', write).send({ type }),
        ]);
        expect([a.status, b.status]).toEqual([200, 200]);
        expect(await storedCustomer(t, id)).toMatchObject({ companyName: name, companyType: type });
      }
    });

    it('answers each of concurrent updates with its own result, every field change kept', async () => {
      const [a, b, c] = await Promise.all(
        ['A', 'B', 'C'].map((name) => createCustomer(t, { name, type: 'private' })),
      );
      const customers = t.app.get(CustomersRepository);
      const found = (customer: Customer | null) =>
        customer && { id: customer.id, name: customer.companyName, type: customer.companyType };
      // Concurrent updates of one id commit in no set order; each answer shows its own change.
      const answers = (
        await Promise.all([
          customers.updateCompany(a.id, { name: 'A2' }),
          customers.updateCompany(b.id, { name: null, type: 'llp' }),
          customers.updateCompany(a.id, { type: 'charity' }),
          customers.updateCompany(c.id, { name: 'First' }),
          customers.updateCompany(2147483647, { name: 'Nobody' }),
          customers.updateCompany(c.id, { name: 'Second' }),
        ])
      ).map(found);
      expect(answers[0]).toMatchObject({ id: a.id, name: 'A2' });
      expect(answers[1]).toEqual({ id: b.id, name: null, type: 'llp' });
      expect(answers[2]).toMatchObject({ id: a.id, type: 'charity' });
      expect(answers[3]).toEqual({ id: c.id, name: 'First', type: 'private' });
      expect(answers[4]).toBeNull();
      expect(answers[5]).toEqual({ id: c.id, name: 'Second', type: 'private' });
      const stored = await Promise.all([a.id, b.id, c.id].map((id) => storedCustomer(t, id)));
      expect(stored.slice(0, 2)).toEqual([
        { id: a.id, companyName: 'A2', companyType: 'charity' },
        { id: b.id, companyName: null, companyType: 'llp' },
      ]);
      expect(['First', 'Second']).toContain(stored[2]?.companyName);
    });

    it('fails only the update the database refuses among concurrent ones', async () => {
      const [a, b] = await Promise.all(
        ['A', 'B'].map((name) => createCustomer(t, { name, type: 'private' })),
      );
      const customers = t.app.get(CustomersRepository);
      // Past the column's 255 characters (validation stops it before; PostgreSQL refuses it,
      // SQLite does not check lengths).
      const outcomes = await Promise.allSettled([
        customers.updateCompany(a.id, { name: 'Kept' }),
        customers.updateCompany(b.id, { name: 'x'.repeat(300) }),
      ]);
      expect(outcomes[0]).toMatchObject({ status: 'fulfilled', value: { companyName: 'Kept' } });
      expect(outcomes[1].status).toBe(t.db.options.type === 'postgres' ? 'rejected' : 'fulfilled');
      expect((await storedCustomer(t, a.id))?.companyName).toBe('Kept');
    });

    it("refuses an update that sets no column, as the caller's mistake", async () => {
      const { id } = await createCustomer(t, { name: 'Same', type: 'plc' });
      await expect(t.app.get(Database).update(Customer, id, {})).rejects.toThrow(
        'Database.update() needs at least one column to set.',
      );
      expect(await storedCustomer(t, id)).toMatchObject({
        companyName: 'Same',
        companyType: 'plc',
      });
    });

    it('turns a retail customer into a company and back', async () => {
      const { id } = await createCustomer(t, { name: null, type: null });
      const put = (body: object) =>
        request(t.http).put(company(id)).set('authorization', write).send(body);
      expect((await put({ name: null })).body).toStrictEqual({ data: { name: null, type: null } });
      expect((await put({ name: 'Shop', type: 'sole-trader' })).body).toStrictEqual({
        data: { name: 'Shop', type: 'sole-trader' },
      });
      // `type` cannot be nulled (docs/contract.md §5); `undefined` is the listed "no type" value.
      expect((await put({ name: null, type: 'undefined' })).body).toStrictEqual({
        data: { name: null, type: 'undefined' },
      });
    });

    it('stores names of exactly 255 characters, counting characters rather than UTF-16 units', async () => {
      const { id } = await createCustomer(t);
      for (const name of ['n'.repeat(255), '🏢'.repeat(255), 'é'.repeat(255)]) {
        const res = await request(t.http)
          .put(company(id))
          .set('authorization', write)
          .send({ name });
        expect(res.status).toBe(200);
        expect(res.body.data.name).toBe(name);
        expect((await storedCustomer(t, id))?.companyName).toBe(name);
      }
    });

    const required = (field: 'name' | 'type', other: 'name' | 'type') =>
      `The ${field} field is required when ${other} is not present.`;
    const invalid: [string, unknown, Record<string, string[]>][] = [
      ['an empty body', {}, { name: [required('name', 'type')], type: [required('type', 'name')] }],
      ['a numeric name', { name: 5 }, { name: ['The name must be a string or null.'] }],
      ['an array name', { name: ['Acme'] }, { name: ['The name must be a string or null.'] }],
      ['an empty name', { name: '' }, { name: ['The name must be between 1 and 255 characters.'] }],
      [
        'a name over 255 characters',
        { name: 'n'.repeat(256) },
        { name: ['The name must be between 1 and 255 characters.'] },
      ],
      [
        'a NUL in the name',
        { name: 'a\u0000b' },
        { name: ['The name must not contain NUL characters.'] },
      ],
      [
        'a null type',
        { type: null },
        { type: [`The type must not be null; it must be one of: ${TYPES}.`] },
      ],
      [
        'a null type beside a valid name',
        { name: 'Acme', type: null },
        { type: [`The type must not be null; it must be one of: ${TYPES}.`] },
      ],
      [
        'a type outside the list',
        { type: 'ltd' },
        { type: [`The type must be one of: ${TYPES}.`] },
      ],
      ['a numeric type', { type: 3 }, { type: [`The type must be one of: ${TYPES}.`] }],
      [
        'an unknown field beside a valid one',
        { name: 'Acme', street: 'Main St' },
        { street: ['The street field is not allowed.'] },
      ],
      [
        'an unknown field alone',
        { street: 'Main St' },
        {
          name: [required('name', 'type')],
          street: ['The street field is not allowed.'],
          type: [required('type', 'name')],
        },
      ],
      [
        'several bad fields',
        { name: 7, type: 'nope', street: 'x' },
        {
          name: ['The name must be a string or null.'],
          street: ['The street field is not allowed.'],
          type: [`The type must be one of: ${TYPES}.`],
        },
      ],
      ['an array body', [{ name: 'Acme' }], { body: ['The request body must be a JSON object.'] }],
      ['a string body', 'Acme', { body: ['The request body must be a JSON object.'] }],
    ];

    it.each(invalid)(
      'answers 422 for %s, naming each offending field',
      async (_, body, expected) => {
        const { id } = await createCustomer(t, { name: 'Unchanged', type: 'charity' });
        const res = await request(t.http)
          .put(company(id))
          .set('authorization', write)
          .set('content-type', 'application/json')
          .send(JSON.stringify(body));
        expect(res.status).toBe(422);
        expect(Object.keys(res.body.errors).sort()).toEqual(Object.keys(expected).sort());
        expect(res.body).toStrictEqual(errors.invalid(expected));
        expect(await storedCustomer(t, id)).toMatchObject({
          companyName: 'Unchanged',
          companyType: 'charity',
        });
      },
    );

    it.each(NOT_CUSTOMER_IDS)(
      'answers 404 for customer id %s, before looking at the body',
      async (id) => {
        for (const body of [{ name: 'Fine' }, {}, { type: null, street: 'x' }]) {
          const res = await request(t.http).put(company(id)).set('authorization', write).send(body);
          expect(res.status).toBe(404);
          expect(res.body).toStrictEqual(errors.customerNotFound);
        }
      },
    );
  });

  describe('tokens and scopes (docs/contract.md §2, §4)', () => {
    it('answers 401 without a token and with a token that is not one, before the resource', async () => {
      for (const id of ['1', 'abc']) {
        const missing = await request(t.http).get(company(id));
        expect(missing.status).toBe(401);
        expect(missing.headers['www-authenticate']).toBe('Bearer realm="api"');
        expect(typeof missing.body.message).toBe('string');

        const garbage = await request(t.http)
          .put(company(id))
          .set('authorization', 'Bearer garbage')
          .send({});
        expect(garbage.status).toBe(401);
        expect(garbage.headers['www-authenticate']).toBe(
          'Bearer realm="api", error="invalid_token"',
        );
      }
    });

    it('answers 403 naming the scope when the token lacks it, before the resource and the body', async () => {
      const { id } = await createCustomer(t);
      const getWithWrite = await request(t.http).get(company(id)).set('authorization', write);
      expect(getWithWrite.status).toBe(403);
      expect(getWithWrite.headers['www-authenticate']).toBe(
        'Bearer realm="api", error="insufficient_scope", scope="customers:read"',
      );

      for (const target of [id, 'abc']) {
        const putWithRead = await request(t.http)
          .put(company(target))
          .set('authorization', read)
          .send({ street: 'x' });
        expect(putWithRead.status).toBe(403);
        expect(putWithRead.headers['www-authenticate']).toBe(
          'Bearer realm="api", error="insufficient_scope", scope="customers:write"',
        );
      }
    });

    it('answers an unknown route under a customer 404 whatever the token', async () => {
      const res = await request(t.http).get('/v2/customers/1/address');
      expect(res.status).toBe(404);
      expect(res.body).toStrictEqual(errors.routeNotFound);
    });

    it('answers a method the path has no route for 404 whatever the token (CONTRACT §2: a route is a method and a path)', async () => {
      const id = (await createCustomer(t)).id;
      for (const authorization of [undefined, 'Bearer not-a-token', read]) {
        for (const method of ['delete', 'patch', 'post'] as const) {
          const req = request(t.http)[method](company(id));
          if (authorization) req.set('authorization', authorization);
          const res = await req;
          expect([method, authorization, res.status, res.body]).toStrictEqual([
            method,
            authorization,
            404,
            errors.routeNotFound,
          ]);
        }
      }
    });
  });
});
