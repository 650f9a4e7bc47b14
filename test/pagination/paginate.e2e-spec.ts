import { jest } from '@jest/globals';
import { Customer } from '../../src/customers/customer.entity.js';
import { CustomersService } from '../../src/customers/customers.service.js';
import { Database } from '../../src/database/database.js';
import { rowCountOf } from '../../src/database/row-counters.js';
import type { PageRequest } from '../../src/pagination/page-query.dto.js';
import { paginate, PaginateOptions } from '../../src/pagination/paginate.js';
import { createCustomers } from '../factories/customer.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { usingPostgres } from '../support/database.js';

const request = (page: number, limit: number): PageRequest => ({
  page,
  limit,
  offset: (page - 1) * limit,
});

/** paginate() against the real database, on the customers table. */
describe('paginate()', () => {
  let t: TestApp;
  let ids: number[];
  beforeAll(async () => {
    t = await startTestApp();
    ids = (await createCustomers(t, 23)).map((c) => c.id);
  });
  afterAll(async () => {
    await t.close();
  });

  const query = () => t.db.getRepository(Customer).createQueryBuilder('customer');
  const db = () => t.app.get(Database);
  const withCounter = (): PaginateOptions => ({ count: rowCountOf(db(), 'customers') });

  /** Every statement paginate() sends, as logged through the data source's logger. */
  async function statements(run: () => Promise<unknown>): Promise<string[]> {
    const spy = jest.spyOn(t.db.logger, 'logQuery');
    try {
      await run();
      return spy.mock.calls.map(([sql]) => sql);
    } finally {
      spy.mockRestore();
    }
  }

  describe.each([
    ['a maintained counter', withCounter],
    ['COUNT(*)', (): PaginateOptions => ({})],
  ])('with the total from %s', (_, options) => {
    it.each([1, 4, 5, 10, 23, 30])(
      'returns every page of limit %i in id order with the exact total',
      async (limit) => {
        const last = Math.max(1, Math.ceil(ids.length / limit));
        for (let page = 1; page <= last + 1; page++) {
          const result = await paginate(db(), query(), request(page, limit), options());
          expect(result.items.map((c) => c.id)).toEqual(
            ids.slice((page - 1) * limit, page * limit),
          );
          expect(result.total).toBe(ids.length);
        }
      },
    );
  });

  it('orders descending when asked, reading the back half from the other end', async () => {
    const descending = [...ids].reverse();
    for (let page = 1; page <= 6; page++) {
      const result = await paginate(db(), query(), request(page, 5), {
        ...withCounter(),
        order: 'DESC',
      });
      expect(result.items.map((c) => c.id)).toEqual(descending.slice((page - 1) * 5, page * 5));
    }
  });

  it('reads a back-half page from the end and a front-half page from the start', async () => {
    const front = await statements(() => paginate(db(), query(), request(2, 5), withCounter()));
    const back = await statements(() => paginate(db(), query(), request(4, 5), withCounter()));
    const idSelect = (sqls: string[]) => sqls.find((s) => /LIMIT/i.test(s)) ?? '';
    expect(idSelect(front)).toMatch(/ORDER BY .* ASC/);
    expect(idSelect(back)).toMatch(/ORDER BY .* DESC/);
  });

  it('selects the page ids first, then only those rows (deferred join)', async () => {
    const sqls = await statements(() => paginate(db(), query(), request(3, 5), withCounter()));
    const selects = sqls.filter((s) => /^SELECT/i.test(s));
    expect(selects).toHaveLength(3); // counter, ids, rows
    expect(selects[1]).toMatch(/LIMIT/i);
    expect(selects[2]).toMatch(/ IN \(/);
    expect(selects[2]).not.toMatch(/LIMIT|OFFSET/i);
  });

  it('never counts rows when given a counter, and skips the page query past the end', async () => {
    const inRange = await statements(() => paginate(db(), query(), request(2, 10), withCounter()));
    expect(inRange.filter((s) => /COUNT\(/i.test(s))).toEqual([]);
    const past = await statements(() => paginate(db(), query(), request(9, 10), withCounter()));
    expect(past.filter((s) => /^SELECT/i.test(s))).toHaveLength(1); // the counter only
  });

  it('skips COUNT(*) when the page itself proves the total', async () => {
    const counts = async (page: number, limit: number) =>
      (await statements(() => paginate(db(), query(), request(page, limit)))).filter((s) =>
        /COUNT\(/i.test(s),
      ).length;
    expect(await counts(3, 10)).toBe(0); // 3 rows of 10: total = 20 + 3
    expect(await counts(1, 30)).toBe(0); // 23 rows of 30 on page 1
    expect(await counts(1, 10)).toBe(1); // full page: more may follow
    expect(await counts(4, 10)).toBe(1); // empty past the end: how far past?
  });

  it('gives the empty set an exact zero without counting', async () => {
    const empty = query().where('customer.id < 0');
    const sqls = await statements(async () => {
      const result = await paginate(db(), empty, request(1, 10));
      expect(result.items).toEqual([]);
      expect(result.total).toBe(0);
    });
    expect(sqls.filter((s) => /COUNT\(/i.test(s))).toEqual([]);
  });

  it('reads the total and a back-half page in one snapshot while a customer is added', async () => {
    // Reading from the end counts positions back from the total, so a customer committed after
    // the total was read must stay invisible to the page query. On PostgreSQL the count query
    // is slowed down so that the insert surely commits in between; SQLite runs both reads
    // synchronously, where nothing can come in between.
    const count = usingPostgres()
      ? db().sql("SELECT value AS total, pg_sleep(0.3) FROM counters WHERE name = 'customers'")
      : rowCountOf(db(), 'customers');
    const total = ids.length;
    const reading = paginate(db(), query(), request(4, 5), { count });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await t.app.get(CustomersService).create({ name: 'Late', type: 'plc' });
    const page = await reading;
    expect(page.items.map((c) => c.id)).toEqual(ids.slice(15, 20));
    expect(page.total).toBe(total);
  });
});
