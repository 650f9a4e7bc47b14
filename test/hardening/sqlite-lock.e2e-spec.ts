import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import request from 'supertest';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';
import { usingPostgres } from '../support/database.js';
import { ROOT, spawnChild } from '../support/processes.js';
import { errors } from '../support/responses.js';
import { createCustomer, storedCustomer } from '../factories/customer.factory.js';

// The PostgreSQL equivalent (a cut connection) is database-faults.e2e-spec.ts.
const onSqlite = usingPostgres() ? describe.skip : describe;

const LOCK_TIMEOUT_MS = 2000;

/**
 * Another process holding SQLite's write lock (BEGIN IMMEDIATE) until it is told to let go on
 * its stdin, or for 10 s at most.
 */
async function holdWriteLock(file: string): Promise<{ release(): Promise<void> }> {
  const script = `
    const db = new (require('better-sqlite3'))(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    const end = () => { db.exec('ROLLBACK'); db.close(); process.exit(0); };
    process.stdin.on('data', end);
    setTimeout(end, 10000);
    process.stdout.write('locked\\n');`;
  const child: ChildProcess = spawnChild(process.execPath, ['-e', script, file], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  await once(child.stdout!, 'data');
  return {
    release: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.stdin!.write('go\n');
      await exited;
    },
  };
}

onSqlite('SQLite locked by another process (SQLite pass only)', () => {
  let t: TestApp;
  let auth: string;
  let file: string;
  beforeAll(async () => {
    t = await startTestApp({ env: { SQLITE_LOCK_TIMEOUT_MS: String(LOCK_TIMEOUT_MS) } });
    auth = await authHeader(t, ['customers:read', 'customers:write']);
    file = t.database.url.replace(/^sqlite:/, '');
  });
  afterAll(async () => {
    await t.close();
  });

  const put = (id: number, name: string) =>
    request(t.http)
      .put(`/v2/customers/${id}/company`)
      .set('authorization', auth)
      .send({ name })
      .then((res) => res);

  it('keeps answering reads and /health while a write waits, then answers that write 503', async () => {
    const customer = await createCustomer(t, { name: 'Before', type: 'plc' });
    const lock = await holdWriteLock(file);
    try {
      let putSettled = false;
      const during = put(customer.id, 'During').finally(() => (putSettled = true));

      // Answered while the PUT still waits for the lock: the wait does not block the event loop.
      await request(t.http).get('/health').expect(200, { status: 'ok' });
      await request(t.http)
        .get(`/v2/customers/${customer.id}/company`)
        .set('authorization', auth)
        .expect(200, { data: { name: 'Before', type: 'plc' } });
      expect(putSettled).toBe(false);

      const res = await during;
      expect(res.status).toBe(503);
      expect(res.body).toEqual(errors.databaseUnavailable);
      expect(res.headers['retry-after']).toBe('1');
      // Writes have been blocked past the bound: not ready, yet alive.
      await request(t.http).get('/health/ready').expect(503, errors.databaseLocked);
      await request(t.http).get('/health').expect(200, { status: 'ok' });
    } finally {
      await lock.release();
    }

    // Ready again as soon as the lock is free, without a write or a restart.
    await request(t.http).get('/health/ready').expect(200, { status: 'ok', database: 'up' });
    expect(await storedCustomer(t, customer.id)).toMatchObject({ companyName: 'Before' });
    const after = await put(customer.id, 'After');
    expect(after.status).toBe(200);
    expect(after.body).toEqual({ data: { name: 'After', type: 'plc' } });
  });

  it('lets a write that waits go through once the lock is released within the bound', async () => {
    const customer = await createCustomer(t, { name: 'Before', type: 'plc' });
    const lock = await holdWriteLock(file);
    let pending: ReturnType<typeof put>;
    try {
      pending = put(customer.id, 'Waited');
      // Answered while the PUT is on its way or waiting for the lock (it cannot have succeeded).
      await request(t.http).get('/health').expect(200);
    } finally {
      await lock.release();
    }
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { name: 'Waited', type: 'plc' } });
    expect(await storedCustomer(t, customer.id)).toMatchObject({ companyName: 'Waited' });
  });
});
