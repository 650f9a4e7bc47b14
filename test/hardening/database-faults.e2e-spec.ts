import { ConfigService } from '@nestjs/config';
import request from 'supertest';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';
import { createCustomer } from '../factories/customer.factory.js';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { Database } from '../../src/database/index.js';
import { usingPostgres } from '../support/database.js';
import { errors } from '../support/responses.js';
import { TcpProxy } from '../support/tcp-proxy.js';

const onPostgres = usingPostgres() ? describe : describe.skip;

async function eventually(check: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

// The SQLite pass has no network between app and database to cut; this runs in the PostgreSQL pass.
onPostgres('PostgreSQL connection cut while requests are in flight (PostgreSQL pass only)', () => {
  let t: TestApp;
  let proxy: TcpProxy;

  beforeAll(async () => {
    t = await startTestApp({
      mapDatabaseUrl: async (url) => {
        const target = new URL(url);
        proxy = await new TcpProxy(target.hostname, Number(target.port || 5432)).start();
        target.host = `127.0.0.1:${proxy.port}`;
        return target.toString();
      },
    });
  });
  afterAll(async () => {
    await proxy.restore().catch(() => undefined);
    await t.close();
    await proxy.cut();
  });

  /**
   * Opens the whole pool, so that each statement sent while the database stalls finds a connection
   * ready and waits out the statement timeout (a new one would fail sooner, at the connect
   * timeout, and hide a wait behind the statements out).
   */
  async function openWholePool(db: Database) {
    const poolSize = t.app.get(ConfigService).get<number>('DATABASE_POOL_SIZE')!;
    await Promise.all(
      Array.from({ length: poolSize }, () => db.select(db.sql('SELECT pg_sleep(0.05)'))),
    );
    expect(db.connections().total).toBe(poolSize);
  }

  /**
   * Stalls the database with every pooled connection open, sends one request per place of a
   * bound on batches out (each once the pool has one more connection in use), then `queued` more,
   * which wait for a place. The contract's bound, not a measure of speed: each answers 503 within
   * 5 s in all, none waiting out another's statement timeout and then its own.
   */
  async function expect503sBehindStall(send: () => request.Test, places: number, queued: number) {
    const db = t.app.get(Database);
    const busy = () => db.connections().total - db.connections().idle;
    await openWholePool(db);
    proxy.stall();
    try {
      const started = Date.now();
      const answer = () =>
        send().then((res) => ({ status: res.status, body: res.body as unknown }));
      const answers: Promise<{ status: number; body: unknown }>[] = [];
      for (let k = 1; k <= places; k++) {
        const before = busy();
        answers.push(answer());
        await eventually(async () => busy() > before, 2000);
      }
      for (let k = 0; k < queued; k++) answers.push(answer());
      const settled = await Promise.all(answers);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(settled).toEqual(
        Array(places + queued).fill({ status: 503, body: errors.databaseUnavailable }),
      );
    } finally {
      proxy.unstall();
    }
  }

  it('answers 503 in bounded time while the database is gone, and recovers without a restart', async () => {
    const auth = await authHeader(t, ['customers:read', 'customers:write']);
    const customer = await createCustomer(t, { name: 'Before', type: 'plc' });
    const company = `/v2/customers/${customer.id}/company`;
    await request(t.http)
      .put(company)
      .set('authorization', auth)
      .send({ name: 'Acked' })
      .expect(200);
    await request(t.http).get('/health/ready').expect(200);

    // Cut while requests are in flight: each answers 200 or the contract's 503, none hangs.
    const inFlightStarted = Date.now();
    const inFlight = Array.from({ length: 20 }, (_, i) =>
      i % 2
        ? request(t.http).get(company).set('authorization', auth)
        : request(t.http).put(company).set('authorization', auth).send({ name: 'Acked' }),
    );
    await new Promise((r) => setImmediate(r));
    await proxy.cut();
    for (const res of await Promise.all(inFlight)) {
      if (res.status === 200) expect(res.body.data.name).toBe('Acked');
      else
        expect({ status: res.status, body: res.body }).toEqual({
          status: 503,
          body: errors.databaseUnavailable,
        });
    }
    expect(Date.now() - inFlightStarted).toBeLessThan(12000);

    // While it stays gone, everything that needs it is 503 in bounded time.
    const started = Date.now();
    const [ready, api] = await Promise.all([
      Promise.all(Array.from({ length: 5 }, () => request(t.http).get('/health/ready'))),
      Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          i % 2
            ? request(t.http).get(company).set('authorization', auth)
            : request(t.http).put(company).set('authorization', auth).send({ type: 'llp' }),
        ),
      ),
    ]);
    expect(Date.now() - started).toBeLessThan(12000);
    for (const res of ready) {
      expect({ status: res.status, body: res.body }).toEqual({
        status: 503,
        body: errors.notReady,
      });
    }
    for (const res of api) {
      expect({ status: res.status, body: res.body }).toEqual({
        status: 503,
        body: errors.databaseUnavailable,
      });
    }

    await proxy.restore();
    await eventually(
      async () => (await request(t.http).get('/health/ready')).status === 200,
      10000,
    );
    // The same process serves again, and what was acknowledged before the cut is there.
    await request(t.http)
      .get(company)
      .set('authorization', auth)
      .expect(200, { data: { name: 'Acked', type: 'plc' } });
  });

  it('answers 503 within 5 s while the database stalls (connections open, nothing answered)', async () => {
    const auth = await authHeader(t, ['customers:read', 'customers:write']);
    const customer = await createCustomer(t, { name: 'Stalled', type: 'plc' });
    const company = `/v2/customers/${customer.id}/company`;
    await request(t.http).get(company).set('authorization', auth).expect(200);
    // Every connection open and idle: each request below waits on a stalled one, not a new one.
    await openWholePool(t.app.get(Database));

    proxy.stall();
    try {
      const started = Date.now();
      // A read, a single-statement write and a transaction (a new customer) of each kind.
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          [
            () => request(t.http).get(company).set('authorization', auth),
            () => request(t.http).put(company).set('authorization', auth).send({ type: 'llp' }),
            () => request(t.http).post('/v2/customers').set('authorization', auth).send({}),
          ][i % 3](),
        ),
      );
      // The contract's bound (statement and connection timeouts), not a measure of speed.
      expect(Date.now() - started).toBeLessThan(5000);
      for (const res of answers) {
        expect({ status: res.status, body: res.body }).toEqual({
          status: 503,
          body: errors.databaseUnavailable,
        });
      }
    } finally {
      proxy.unstall();
    }
    await eventually(
      async () => (await request(t.http).get(company).set('authorization', auth)).status === 200,
      10000,
    );
  });

  // One write holds a connection on the stalled database; two more queue behind it, and neither
  // may wait out the statement's timeout and then its own.
  it.each([
    ['webhook deliveries', 'webhooks:write'],
    ['company updates', 'customers:write'],
  ] as const)(
    'answers 503 within 5 s to %s, also those queued behind a stalled write statement',
    async (_kind, scope) => {
      const auth = await authHeader(t, [scope]);
      const customers = await Promise.all([1, 2, 3].map(() => createCustomer(t)));
      let next = 0;
      const write = () =>
        scope === 'webhooks:write'
          ? request(t.http).post('/v2/webhooks').set('authorization', auth).send(attemptCompleted())
          : request(t.http)
              .put(`/v2/customers/${customers[next++ % customers.length].id}/company`)
              .set('authorization', auth)
              .send({ type: 'llp' });
      await write().expect(200);
      await expect503sBehindStall(write, 1, 2);
      await eventually(async () => (await write()).status === 200, 10000);
    },
  );
});
