import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { freePort, runNode, ServerProcess, spawnChild, startServer } from '../support/processes.js';
import { errors, oauthErrors } from '../support/responses.js';

/**
 * A Redis of this test's own (its own port, no persistence) stopped in the middle of a run: the
 * token endpoint keeps answering, with each instance counting alone, and the counters are
 * shared again once Redis is back. Two instances (processes) on one database, SQLite or
 * PostgreSQL: throttling does not depend on the database.
 */
describe('Redis going away and coming back', () => {
  let database: TestDatabase;
  let port: number;
  let redisServer: ChildProcess | undefined;
  let instances: ServerProcess[] = [];
  let nextAddress = 1;
  const newAddress = () => `192.0.2.${nextAddress++}`;

  const startRedis = async () => {
    const child = spawnChild(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    // Its own log line says when it accepts connections. (Probing with an ioredis client that
    // fails to connect leaves a 2 s disconnect timer behind, which keeps Jest's worker alive.)
    let log = '';
    child.stdout!.setEncoding('utf8');
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: string) => {
        log += chunk;
        if (log.includes('Ready to accept connections')) resolve();
      });
      child.once('exit', () => reject(new Error(`redis-server exited: ${log}`)));
    });
    child.stdout!.resume();
    return child;
  };
  const stopRedis = async () => {
    const child = redisServer!;
    redisServer = undefined;
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await once(child, 'exit');
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    port = await freePort();
    redisServer = await startRedis();
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: `redis://127.0.0.1:${port}/0`,
      TRUST_PROXY: 'loopback',
      // One service behind one public URL: every instance shares the issuer (set, as deployments do).
      TOKEN_ISSUER: 'http://cluster.test',
      THROTTLE_TOKEN_FAILURES_PER_CLIENT: '3',
      LOG_LEVEL: 'info',
    };
    instances = [await startServer(env)];
    instances.push(await startServer(env));
    const created = await runNode(
      'dist/src/cli.js',
      ['clients:create', '--name', 'outage', '--scopes', 'customers:read'],
      { ...env, LOG_LEVEL: 'warn' },
    );
    client = JSON.parse(created.stdout) as typeof client;
  }, 120000);
  afterAll(async () => {
    await Promise.all(instances.map((i) => i.stop()));
    if (redisServer) await stopRedis();
    await database.drop();
  });

  let client: { client_id: string; client_secret: string };
  const tokenRequest = async (instance: ServerProcess, address: string, secret: string) => {
    const res = await fetch(`${instance.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        scope: 'customers:read',
        client_id: client.client_id,
        client_secret: secret,
      }),
    });
    return { status: res.status, body: (await res.json()) as unknown };
  };
  /** 3 failures spread over both instances, then the 4th: 429 when the count is shared. */
  /** Waits (polling, bounded) until the instance has logged `text`. */
  const logged = async (instance: ServerProcess, text: string) => {
    for (let waited = 0; !instance.output().includes(text); waited += 50) {
      if (waited > 10_000) throw new Error(`not logged within 10 s: ${text}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const fourthFailure = async (address: string) => {
    for (let i = 0; i < 3; i++) {
      expect(await tokenRequest(instances[i % 2], address, 'wrong')).toEqual({
        status: 401,
        body: oauthErrors.invalidClient,
      });
    }
    return tokenRequest(instances[1], address, 'wrong');
  };

  it('shares the counts while Redis is up', async () => {
    expect(await fourthFailure(newAddress())).toEqual({
      status: 429,
      body: errors.tooManyRequests,
    });
  });

  it('keeps answering while Redis is connected but silent (stopped with SIGSTOP), then uses it again', async () => {
    // A Redis that accepts nothing and answers nothing, but keeps its connections: the token
    // requests waited for its replies without end, and were cut without an answer.
    process.kill(redisServer!.pid!, 'SIGSTOP');
    try {
      for (const instance of instances) {
        const res = await tokenRequest(instance, newAddress(), client.client_secret);
        expect(res.status).toBe(200);
        expect(await tokenRequest(instance, newAddress(), 'wrong')).toEqual({
          status: 401,
          body: oauthErrors.invalidClient,
        });
      }
      const revoked = await fetch(`${instances[0].baseUrl}/oauth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          token: 'not-a-token',
          client_id: client.client_id,
          client_secret: client.client_secret,
        }),
      });
      expect(revoked.status).toBe(200);
    } finally {
      process.kill(redisServer!.pid!, 'SIGCONT');
    }
    expect(await fourthFailure(newAddress())).toEqual({
      status: 429,
      body: errors.tooManyRequests,
    });
  });

  it('keeps answering while Redis is down, each instance counting alone; then shares again once it is back', async () => {
    await stopRedis();

    // Every request is answered, and right away: tokens are issued.
    for (const instance of instances) {
      const res = await tokenRequest(instance, newAddress(), client.client_secret);
      expect(res.status).toBe(200);
    }
    // Each instance counts for itself: 2 failures here, 1 there is not yet past 3 anywhere.
    expect((await fourthFailure(newAddress())).status).toBe(401);
    // …but each one still enforces the limit alone.
    const address = newAddress();
    for (let i = 0; i < 3; i++) await tokenRequest(instances[0], address, 'wrong');
    expect(await tokenRequest(instances[0], address, 'wrong')).toEqual({
      status: 429,
      body: errors.tooManyRequests,
    });
    // Logged once the client's reconnect attempt fails, which may come after the requests above.
    for (const instance of instances) await logged(instance, 'Redis unreachable');

    redisServer = await startRedis();
    // Poll until both instances count in Redis again (a failure lands in the shared counter).
    const redis = new Redis({ port });
    try {
      for (const [n, instance] of instances.entries()) {
        const probe = `203.0.113.${200 + n}`;
        for (;;) {
          await tokenRequest(instance, probe, 'wrong');
          const keys = await redis.keys(`*client-failures*${probe}*`);
          if (keys.length > 0) break;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    } finally {
      redis.disconnect();
    }
    expect(await fourthFailure(newAddress())).toEqual({
      status: 429,
      body: errors.tooManyRequests,
    });
    for (const instance of instances) await logged(instance, 'Redis reachable again');
  }, 60000);

  it('an instance started while Redis is down subscribes to cluster messages once it is back', async () => {
    await stopRedis();
    const late = await startServer({
      DATABASE_URL: database.url,
      REDIS_URL: `redis://127.0.0.1:${port}/0`,
      TOKEN_ISSUER: 'http://cluster.test',
      LOG_LEVEL: 'info',
    });
    instances.push(late);
    await logged(late, 'could not subscribe to cluster messages on Redis');
    redisServer = await startRedis();
    // Every instance listens again, the late one too (it used to stay deaf until restarted).
    const redis = new Redis({ port });
    try {
      for (let waited = 0; ; waited += 100) {
        const [, listeners] = (await redis.pubsub('NUMSUB', 'company-api:0:token-state')) as [
          string,
          number,
        ];
        if (listeners === instances.length) break;
        if (waited > 15_000) throw new Error(`${listeners} of ${instances.length} subscribed`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      redis.disconnect();
    }
  }, 60000);
});
