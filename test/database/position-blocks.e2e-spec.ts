import request from 'supertest';
import {
  CustomersRepository,
  type SampleCompany,
} from '../../src/customers/customers.repository.js';
import { Database } from '../../src/database/index.js';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';

/**
 * The customers total is kept by the database's own triggers (the migrations CreateListPositions, AddPositionSuperblocks): exact under
 * concurrent inserts, whichever path inserted the rows, and after deletes.
 */
describe('row counters kept by the database', () => {
  let t: TestApp;
  let db: Database;
  beforeAll(async () => {
    t = await startTestApp();
    db = t.app.get(Database);
  });
  afterAll(async () => {
    await t.close();
  });

  const counted = async () => {
    const [{ n }] = await db.select(db.sql('SELECT COUNT(*) AS n FROM customers'));
    return Number(n);
  };

  it('stays exact under concurrent inserts, bulk inserts, raw inserts and deletes', async () => {
    const auth = await authHeader(t, ['customers:read', 'customers:write']);
    const customers = t.app.get(CustomersRepository);
    await Promise.all([
      ...Array.from({ length: 40 }, (_, i) =>
        request(t.http)
          .post('/v2/customers')
          .set('authorization', auth)
          .send({ company: { name: `Concurrent ${i}`, type: 'plc' } })
          .expect(201),
      ),
      ...Array.from({ length: 20 }, (_, i) =>
        customers.insert({ name: `Direct ${i}`, type: null }),
      ),
      customers.insertMany(Array.from({ length: 7_000 }, (): SampleCompany => ['Bulk', 'llp'])),
      db.execute(db.sql(`INSERT INTO customers (company_name) VALUES ('Raw')`)),
    ]);
    expect(await counted()).toBe(40 + 20 + 7_000 + 1);
    expect(await customers.count()).toBe(await counted());

    const [{ n: doomed }] = await db.select(
      db.sql(`SELECT COUNT(*) AS n FROM customers WHERE company_name = 'Bulk' AND id % 2 = 0`),
    );
    await db.write(function* () {
      yield db.sql(`DELETE FROM customers WHERE company_name = 'Bulk' AND id % 2 = 0`);
    });
    const total = await counted();
    expect(total).toBe(40 + 20 + 7_000 + 1 - Number(doomed));
    const res = await request(t.http)
      .get('/v2/customers?result_mode[attributes][limit]=1')
      .set('authorization', auth)
      .expect(200);
    expect(res.body.meta).toMatchObject({ total, last_page: total });
  });
});
