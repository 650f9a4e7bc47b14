import { ConfigService } from '@nestjs/config';
import request from 'supertest';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';
import { createCustomer } from '../factories/customer.factory.js';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { Database, WRITE_BATCHES_IN_FLIGHT } from '../../src/database/database.js';
import { READ_BATCHES_IN_FLIGHT } from '../../src/database/read-batches.js';
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

    proxy.stall();
    try {
      const started = Date.now();
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          i % 2
            ? request(t.http).get(company).set('authorization', auth)
            : request(t.http).put(company).set('authorization', auth).send({ type: 'llp' }),
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
  it('answers 503 within 5 s to reads queued behind stalled ones (the bound on read batches out)', async () => {
    const auth = await authHeader(t, ['customers:read']);
    const customer = await createCustomer(t, { name: 'Queued', type: 'plc' });
    const company = `/v2/customers/${customer.id}/company`;
    await request(t.http).get(company).set('authorization', auth).expect(200);
    const db = t.app.get(Database);
    const busy = () => db.connections().total - db.connections().idle;
    await openWholePool(db);

    proxy.stall();
    try {
      const started = Date.now();
      const reads: Promise<{ status: number; body: unknown }>[] = [];
      // One read per batch until the bound is out (each batch holds a connection: the next read
      // is sent once the pool has one more in use), then one more, which waits for a place.
      for (let k = 1; k <= READ_BATCHES_IN_FLIGHT + 1; k++) {
        const before = busy();
        reads.push(
          request(t.http)
            .get(company)
            .set('authorization', auth)
            .then((res) => ({ status: res.status, body: res.body as unknown })),
        );
        if (k <= READ_BATCHES_IN_FLIGHT) await eventually(async () => busy() > before, 2000);
      }
      const answers = await Promise.all(reads);
      // The contract's bound, not a measure of speed: the last read must not wait out the
      // statement timeout of the ones before it and then its own.
      expect(Date.now() - started).toBeLessThan(5000);
      expect(answers).toEqual(
        Array(READ_BATCHES_IN_FLIGHT + 1).fill({ status: 503, body: errors.databaseUnavailable }),
      );
    } finally {
      proxy.unstall();
    }
    await eventually(
      async () => (await request(t.http).get(company).set('authorization', auth)).status === 200,
      10000,
    );
  });

  // One write per statement until the bound is out, then two more, which wait for a place and go
  // as one statement. The contract's bound, not a measure of speed: a write must not wait out one
  // statement timeout and then another (its own after the one before it, each of a statement
  // alone after the statement, or a delivery's general path after its one-statement path).
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
      const db = t.app.get(Database);
      const busy = () => db.connections().total - db.connections().idle;
      await openWholePool(db);

      proxy.stall();
      try {
        const started = Date.now();
        const answer = () =>
          write().then((res) => ({ status: res.status, body: res.body as unknown }));
        const writes: Promise<{ status: number; body: unknown }>[] = [];
        for (let k = 1; k <= WRITE_BATCHES_IN_FLIGHT; k++) {
          const before = busy();
          writes.push(answer());
          await eventually(async () => busy() > before, 2000);
        }
        writes.push(answer(), answer());
        const answers = await Promise.all(writes);
        expect(Date.now() - started).toBeLessThan(5000);
        expect(answers).toEqual(
          Array(WRITE_BATCHES_IN_FLIGHT + 2).fill({
            status: 503,
            body: errors.databaseUnavailable,
          }),
        );
      } finally {
        proxy.unstall();
      }
      await eventually(async () => (await write()).status === 200, 10000);
    },
  );
});
