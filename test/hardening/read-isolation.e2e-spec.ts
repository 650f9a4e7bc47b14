import { Injectable, Module } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Min } from 'class-validator';
import request from 'supertest';
import { Customer } from '../../src/customers/customer.entity.js';
import { WebhookEvent } from '../../src/webhooks/webhook-event.entity.js';
import {
  WebhookHandler,
  type WebhookContext,
  type WebhookEventHandler,
} from '../../src/webhooks/webhook-handler.decorator.js';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';
import { errors } from '../support/responses.js';
import { createCustomer, storedCustomer } from '../factories/customer.factory.js';

class RenamePayload {
  @ApiProperty({ type: 'integer' })
  @IsInt()
  @Min(1)
  customer_id: number;
}

/** Lets the test look at the service while a handler's writes are in progress. */
@Injectable()
class Gate {
  entered!: () => void;
  readonly inside = new Promise<void>((resolve) => (this.entered = resolve));
  release!: () => void;
  readonly released = new Promise<void>((resolve) => (this.release = resolve));
}

/** Renames a customer and adds one, waits for the test, then fails: nothing of it may show. */
@WebhookHandler({ event: 'test.rename', payload: RenamePayload, dedupeKey: (p) => p.customer_id })
class RenameHandler implements WebhookEventHandler<RenamePayload> {
  constructor(private readonly gate: Gate) {}

  async handle(payload: RenamePayload, { manager }: WebhookContext): Promise<void> {
    await manager.update(Customer, payload.customer_id, { companyName: 'Uncommitted' });
    await manager.insert(Customer, { companyName: 'Phantom', companyType: 'plc' });
    this.gate.entered();
    await this.gate.released;
    throw new Error('rolled back on purpose');
  }
}

@Module({ providers: [Gate, RenameHandler] })
class RenameEventModule {}

/**
 * Readers never see another request's uncommitted writes. On SQLite every write shares one
 * connection, so this holds because reads run on a read-only connection of their own
 * (src/database/sqlite-connections.ts); on PostgreSQL each transaction has its own connection.
 */
describe('reads while a webhook handler has written and not committed', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ imports: [RenameEventModule] });
  });
  afterAll(async () => {
    await t.close();
  });

  it('show only committed data, and the event ends failed', async () => {
    const auth = await authHeader(t, [
      'customers:read',
      'customers:write',
      'webhooks:read',
      'webhooks:write',
    ]);
    const customer = await createCustomer(t, { name: 'Before', type: 'plc' });
    const gate = t.app.get(Gate);
    const get = (url: string) => request(t.http).get(url).set('authorization', auth);

    const webhook = request(t.http)
      .post('/v2/webhooks')
      .set('authorization', auth)
      .send({ event: 'test.rename', payload: { customer_id: customer.id } })
      .then((res) => res);
    await gate.inside;

    try {
      const [company, list, one, events] = await Promise.all([
        get(`/v2/customers/${customer.id}/company`),
        get('/v2/customers'),
        get(`/v2/customers/${customer.id}`),
        get('/v2/webhooks'),
      ]);
      expect(company.status).toBe(200);
      expect(company.body).toEqual({ data: { name: 'Before', type: 'plc' } });
      expect(list.status).toBe(200);
      expect(list.body.data).toEqual([
        { id: customer.id, company: { name: 'Before', type: 'plc' } },
      ]);
      expect(list.body.meta).toMatchObject({ total: 1, to: 1 });
      expect(one.body).toEqual({
        data: { id: customer.id, company: { name: 'Before', type: 'plc' } },
      });
      expect(events.status).toBe(200);
      expect(events.body.data).toEqual([]);
      expect(events.body.meta).toMatchObject({ total: 0 });
      // Reads past the HTTP layer, through TypeORM, are routed the same way.
      expect(await t.db.getRepository(WebhookEvent).count()).toBe(0);
      expect(await t.db.getRepository(Customer).count()).toBe(1);
    } finally {
      gate.release();
    }

    const res = await webhook;
    expect(res.status).toBe(500);
    expect(res.body).toEqual(errors.webhookFailed(res.body.id));
    const event = await get(`/v2/webhooks/${res.body.id}`);
    expect(event.body.data).toMatchObject({ status: 'failed', attempts: 1, processed_at: null });
    expect(await storedCustomer(t, customer.id)).toMatchObject({ companyName: 'Before' });
    const after = await get('/v2/customers');
    expect(after.body.meta).toMatchObject({ total: 1 });
  });
});
