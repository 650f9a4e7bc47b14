import { Injectable, Module } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsInt, Min } from 'class-validator';
import request from 'supertest';
import {
  WebhookHandler,
  type WebhookContext,
  type WebhookEventHandler,
} from '../../src/webhooks/webhook-handler.decorator.js';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';
import { createCustomer, storedCustomer } from '../factories/customer.factory.js';

class GatedPayload {
  @ApiProperty({ type: 'integer' })
  @IsInt()
  @Min(1)
  n: number;
}

/** Lets the test hold a handler's transaction open, then make it fail. */
@Injectable()
class Gate {
  entered!: () => void;
  readonly inside = new Promise<void>((resolve) => (this.entered = resolve));
  release!: () => void;
  readonly released = new Promise<void>((resolve) => (this.release = resolve));
}

@WebhookHandler({ event: 'test.gated', payload: GatedPayload, dedupeKey: (p) => p.n })
class GatedHandler implements WebhookEventHandler<GatedPayload> {
  constructor(private readonly gate: Gate) {}

  async handle(_payload: GatedPayload, { manager }: WebhookContext): Promise<void> {
    await manager.query('SELECT 1');
    this.gate.entered();
    await this.gate.released;
    throw new Error('rolled back on purpose');
  }
}

@Module({ providers: [Gate, GatedHandler] })
class GatedEventModule {}

/**
 * A write acknowledged to one caller must not be undone by another caller's failed transaction.
 * On SQLite every request shares one connection, so this holds only because writes take turns
 * (src/database/sqlite-connections.ts). On PostgreSQL each transaction has its own connection.
 */
describe('writes while another transaction is open and then fails', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ imports: [GatedEventModule] });
  });
  afterAll(async () => {
    await t.close();
  });

  it('keeps an acknowledged PUT and POST when a concurrent webhook handler rolls back', async () => {
    const auth = await authHeader(t, ['customers:read', 'customers:write', 'webhooks:write']);
    const customer = await createCustomer(t, { name: 'Before', type: 'plc' });
    const gate = t.app.get(Gate);

    const webhook = request(t.http)
      .post('/v2/webhooks')
      .set('authorization', auth)
      .send({ event: 'test.gated', payload: { n: 1 } })
      .then((res) => res);
    await gate.inside;

    const put = request(t.http)
      .put(`/v2/customers/${customer.id}/company`)
      .set('authorization', auth)
      .send({ name: 'During' })
      .then((res) => res);
    const post = request(t.http)
      .post('/v2/customers')
      .set('authorization', auth)
      .send({ company: { name: 'New Co', type: 'llp' } })
      .then((res) => res);
    await new Promise((r) => setTimeout(r, 100));
    gate.release();

    const [w, p, c] = await Promise.all([webhook, put, post]);
    expect(w.status).toBe(500);
    expect(p.status).toBe(200);
    expect(c.status).toBe(201);
    expect((await storedCustomer(t, customer.id))!.companyName).toBe('During');
    expect(await storedCustomer(t, c.body.data.id)).toMatchObject({ companyName: 'New Co' });
  });
});
