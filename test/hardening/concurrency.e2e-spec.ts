import request from 'supertest';
import { COMPANY_TYPES } from '../../src/customers/company-type.js';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';
import { createCustomer, storedCustomer } from '../factories/customer.factory.js';

describe('concurrency', () => {
  let t: TestApp;
  let auth: string;
  beforeAll(async () => {
    t = await startTestApp();
    auth = await authHeader(t, ['customers:read', 'customers:write']);
  });
  afterAll(async () => {
    await t.close();
  });

  it('200 concurrent PUTs of alternating fields end in a state some serial order produces', async () => {
    const customer = await createCustomer(t, { name: 'Start', type: 'private' });
    const puts = Array.from({ length: 200 }, (_, i) =>
      i % 2 === 0 ? { name: `Name ${i}` } : { type: COMPANY_TYPES[i % COMPANY_TYPES.length] },
    );
    const answers = await Promise.all(
      puts.map((body) =>
        request(t.http)
          .put(`/v2/customers/${customer.id}/company`)
          .set('authorization', auth)
          .send(body),
      ),
    );
    for (const [i, res] of answers.entries()) {
      expect(res.status).toBe(200);
      // Each answer shows its own write (the field it sent holds the value it sent).
      expect(res.body.data).toMatchObject(puts[i]);
    }
    const stored = await storedCustomer(t, customer.id);
    const names = puts.flatMap((p) => ('name' in p ? [p.name] : []));
    const types = puts.flatMap((p) => ('type' in p ? [p.type] : []));
    expect(names).toContain(stored!.companyName);
    expect(types).toContain(stored!.companyType);

    // The last answer to be sent for each field is the serial order's last write of it.
    const res = await request(t.http)
      .get(`/v2/customers/${customer.id}/company`)
      .set('authorization', auth)
      .expect(200);
    expect(res.body).toEqual({ data: { name: stored!.companyName, type: stored!.companyType } });
  });
});
