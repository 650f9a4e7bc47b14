import request from 'supertest';
import { startTestApp, TestApp } from '../support/app.js';
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

  it('answers 503 in bounded time while the database is gone, and recovers without a restart', async () => {
    await request(t.http).get('/health/ready').expect(200);

    await proxy.cut();
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => request(t.http).get('/health/ready')),
    );
    expect(Date.now() - started).toBeLessThan(6000);
    for (const res of answers) {
      expect(res.status).toBe(503);
      expect(res.body).toEqual(errors.notReady);
    }

    await proxy.restore();
    await eventually(
      async () => (await request(t.http).get('/health/ready')).status === 200,
      10000,
    );
  });
});
