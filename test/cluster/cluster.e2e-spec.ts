import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createTestDatabase, TestDatabase, usingPostgres } from '../support/database.js';
import { runNode, ServerProcess, startServer } from '../support/processes.js';
import { errors, oauthErrors } from '../support/responses.js';
import { testRedisUrl } from './redis.js';

const REFUSED_WITHIN_MS = 1000;
// Each case starts CLI processes (seconds each on a busy machine).
const CASE_TIMEOUT_MS = 120000;

/**
 * CONTRACT §9: three instances (separate processes, the built server as `npm start` runs it) on
 * one fresh PostgreSQL database and one Redis database behave as one service. Limits are the
 * contract's defaults; callers' addresses are set with X-Forwarded-For (the loopback proxy is
 * trusted), each case its own.
 */
(usingPostgres() ? describe : describe.skip)(
  usingPostgres()
    ? 'three instances on one PostgreSQL database and one Redis'
    : 'three instances on one PostgreSQL database and one Redis (skipped: needs PostgreSQL, set TEST_DATABASE_URL)',
  () => {
    let database: TestDatabase;
    let redis: Redis;
    let env: Record<string, string>;
    const instances: ServerProcess[] = [];
    let nextAddress = 1;
    const newAddress = () => `198.51.100.${nextAddress++}`;

    beforeAll(async () => {
      database = await createTestDatabase();
      const redisUrl = testRedisUrl(6);
      redis = new Redis(redisUrl);
      await redis.flushdb();
      env = {
        DATABASE_URL: database.url,
        REDIS_URL: redisUrl,
        TRUST_PROXY: 'loopback',
        // One service behind one public URL: every instance shares the issuer (set, as deployments do).
        TOKEN_ISSUER: 'http://cluster.test',
        LOG_LEVEL: 'info',
        // Slower than the 1 s asked of revocation: only the push can meet it.
        REVOCATION_REFRESH_MS: '5000',
      };
      // The first applies the migrations; the others start together.
      instances.push(await startServer(env));
      instances.push(...(await Promise.all([startServer(env), startServer(env)])));
    }, 120000);
    afterAll(async () => {
      await Promise.all(instances.map((i) => i.stop()));
      await redis.quit();
      await database.drop();
    });

    const cli = async (...args: string[]) => {
      const result = await runNode('dist/src/cli.js', args, { ...env, LOG_LEVEL: 'warn' });
      if (result.code !== 0) throw new Error(`cli ${args[0]} failed: ${result.stderr}`);
      return JSON.parse(result.stdout) as Record<string, unknown>;
    };
    const newClient = async (scopes = 'customers:read webhooks:write webhooks:read') => {
      const created = await cli('clients:create', '--name', 'cluster', '--scopes', scopes);
      return { id: created.client_id as string, secret: created.client_secret as string };
    };
    const call = async (
      instance: ServerProcess,
      method: string,
      path: string,
      { body, headers = {} }: { body?: unknown; headers?: Record<string, string> } = {},
    ) => {
      const res = await fetch(`${instance.baseUrl}${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? (JSON.parse(text) as any) : undefined };
    };
    const tokenRequest = (
      instance: ServerProcess,
      client: { id: string; secret: string },
      address: string,
      scope = 'customers:read',
    ) =>
      call(instance, 'POST', '/oauth/token', {
        body: {
          grant_type: 'client_credentials',
          scope,
          client_id: client.id,
          client_secret: client.secret,
        },
        headers: { 'x-forwarded-for': address },
      });
    const token = async (client: { id: string; secret: string }, scope?: string) => {
      const res = await tokenRequest(instances[0], client, newAddress(), scope);
      expect(res.status).toBe(200);
      return `Bearer ${res.body.access_token as string}`;
    };
    /** Asserts that every instance accepts the token (and so has verified and cached it). */
    const acceptedEverywhere = async (authorization: string) => {
      for (const instance of instances) {
        expect(
          (await call(instance, 'GET', '/v2/customers', { headers: { authorization } })).status,
        ).toBe(200);
      }
    };
    /** Runs `work` on a connection of its own to the cluster's database. */
    const withDatabase = async <T>(work: (db: pg.Client) => Promise<T>): Promise<T> => {
      const db = new pg.Client({ connectionString: database.url });
      await db.connect();
      try {
        return await work(db);
      } finally {
        await db.end();
      }
    };
    /** Polls until every instance refuses the token; how long that took after `since`. */
    const refusedEverywhereAfter = async (authorization: string, since: number) => {
      for (const instance of instances) {
        for (;;) {
          const res = await call(instance, 'GET', '/v2/customers', { headers: { authorization } });
          if (res.status === 401) break;
          expect(res.status).toBe(200);
          if (Date.now() - since > 10_000) break;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      return Date.now() - since;
    };

    it(
      'says in its start-up log, on PostgreSQL without REDIS_URL, that limits are per instance',
      async () => {
        expect(instances[0].output()).not.toContain('counted per instance');
        const alone = await startServer({ ...env, REDIS_URL: '' });
        try {
          expect(alone.output()).toContain(
            'throttling limits are counted per instance (REDIS_URL is not set): N instances allow N times each limit',
          );
        } finally {
          await alone.stop();
        }
      },
      CASE_TIMEOUT_MS,
    );

    it(
      'counts failed client authentications across instances: the 11th failure is 429 wherever it lands; other addresses are not refused',
      async () => {
        const client = await newClient();
        const address = newAddress();
        const wrong = { ...client, secret: 'wrong' };
        for (let i = 0; i < 10; i++) {
          const res = await tokenRequest(instances[i % 3], wrong, address);
          expect(res).toEqual({ status: 401, body: oauthErrors.invalidClient });
        }
        for (const instance of instances) {
          expect(await tokenRequest(instance, client, address)).toEqual({
            status: 429,
            body: errors.tooManyRequests,
          });
        }
        const elsewhere = newAddress();
        for (const instance of instances) {
          expect((await tokenRequest(instance, client, elsewhere)).status).toBe(200);
        }
      },
      CASE_TIMEOUT_MS,
    );

    it(
      'holds under 30 wrong secrets sent at once over the three: at most 10 are answered 401, the rest 429',
      async () => {
        const client = await newClient();
        const address = newAddress();
        const statuses = (
          await Promise.all(
            Array.from({ length: 30 }, (_, i) =>
              tokenRequest(instances[i % 3], { ...client, secret: 'wrong' }, address),
            ),
          )
        ).map((res) => res.status);
        expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
        expect(statuses.filter((s) => s === 429).length).toBe(
          30 - statuses.filter((s) => s === 401).length,
        );
      },
      CASE_TIMEOUT_MS,
    );

    it(
      'refuses a token revoked on instance 1 on instances 2 and 3 within 1 s',
      async () => {
        const client = await newClient();
        const authorization = await token(client);
        // Verified, and cached, everywhere first.
        await acceptedEverywhere(authorization);
        const revoked = await call(instances[0], 'POST', '/oauth/revoke', {
          body: {
            token: authorization.slice(7),
            client_id: client.id,
            client_secret: client.secret,
          },
        });
        expect(revoked.status).toBe(200);
        expect(await refusedEverywhereAfter(authorization, Date.now())).toBeLessThan(
          REFUSED_WITHIN_MS,
        );
      },
      CASE_TIMEOUT_MS,
    );

    it(
      'refuses every token of a client disabled with the CLI on all three within 1 s',
      async () => {
        const client = await newClient();
        const authorization = await token(client);
        await acceptedEverywhere(authorization);
        await cli('clients:disable', '--client-id', client.id);
        expect(await refusedEverywhereAfter(authorization, Date.now())).toBeLessThan(
          REFUSED_WITHIN_MS,
        );
      },
      CASE_TIMEOUT_MS,
    );

    it(
      'processes the same webhook-id posted to all three, 20 times at once, exactly once',
      async () => {
        const client = await newClient();
        const authorization = await token(client, 'webhooks:write');
        const webhookId = `msg_${randomUUID()}`;
        const attemptId = 1_000_000 + Math.floor(Math.random() * 1_000_000);
        const responses = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            call(instances[i % 3], 'POST', '/v2/webhooks', {
              body: {
                event: 'learning.attempt.completed',
                payload: { user_id: 1, module_id: 2, attempt_id: attemptId + i },
              },
              headers: { authorization, 'webhook-id': webhookId },
            }),
          ),
        );
        expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
        expect(new Set(responses.map((r) => r.body.data.id as string)).size).toBe(1);
        await withDatabase(async (db) => {
          const events = await db.query(
            'SELECT id FROM webhook_events WHERE client_id = $1 AND dedupe_key = $2',
            [client.id, `sender:${webhookId}`],
          );
          expect(events.rows).toEqual([{ id: responses[0].body.data.id }]);
          const attempts = await db.query(
            'SELECT count(*)::int AS n FROM completed_attempts WHERE client_id = $1',
            [client.id],
          );
          expect(attempts.rows).toEqual([{ n: 1 }]);
        });
      },
      CASE_TIMEOUT_MS,
    );

    it(
      'keeps two clients apart: the same attempt_id is two events and two attempts, neither sees the other',
      async () => {
        const [a, b] = [await newClient(), await newClient()];
        const [writeA, writeB] = [
          await token(a, 'webhooks:write'),
          await token(b, 'webhooks:write'),
        ];
        const [readA, readB] = [await token(a, 'webhooks:read'), await token(b, 'webhooks:read')];
        const attemptId = 3_000_000 + Math.floor(Math.random() * 1_000_000);
        const deliver = (instance: ServerProcess, authorization: string, userId: number) =>
          call(instance, 'POST', '/v2/webhooks', {
            body: {
              event: 'learning.attempt.completed',
              payload: { user_id: userId, module_id: 2, attempt_id: attemptId },
            },
            headers: { authorization },
          });
        const [fromA, fromB] = await Promise.all([
          deliver(instances[0], writeA, 1),
          deliver(instances[1], writeB, 2),
        ]);
        expect([fromA.status, fromB.status]).toEqual([200, 200]);
        expect(fromA.body.data.id).not.toBe(fromB.body.data.id);

        for (const instance of instances) {
          expect(
            await call(instance, 'GET', `/v2/webhooks/${fromB.body.data.id}`, {
              headers: { authorization: readA },
            }),
          ).toEqual({ status: 404, body: { message: 'Webhook not found.' } });
          expect(
            (
              await call(instance, 'GET', `/v2/webhooks/${fromB.body.data.id}`, {
                headers: { authorization: readB },
              })
            ).body.data.payload,
          ).toEqual({ user_id: 2, module_id: 2, attempt_id: attemptId });
        }
        const listed = await call(instances[2], 'GET', '/v2/webhooks', {
          headers: { authorization: readA },
        });
        expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([fromA.body.data.id]);

        await withDatabase(async (db) => {
          const attempts = await db.query(
            'SELECT client_id, user_id::int FROM completed_attempts WHERE attempt_id = $1 ORDER BY user_id',
            [attemptId],
          );
          expect(attempts.rows).toEqual([
            { client_id: a.id, user_id: 1 },
            { client_id: b.id, user_id: 2 },
          ]);
        });
      },
      CASE_TIMEOUT_MS,
    );

    // Last: it kills an instance.
    it(
      'loses nothing when one instance is killed under webhook load: the others keep answering, every 200 is listed once',
      async () => {
        const client = await newClient();
        const write = await token(client, 'webhooks:write');
        const read = await token(client, 'webhooks:read');
        const acknowledged: string[] = [];
        let attemptId = 5_000_000 + Math.floor(Math.random() * 1_000_000);
        let stop = false;
        let answeredAfterKill = 0;
        let killed = false;
        const sender = async (offset: number) => {
          for (let i = offset; !stop; i++) {
            const instance = instances[i % 3];
            try {
              const res = await call(instance, 'POST', '/v2/webhooks', {
                body: {
                  event: 'learning.attempt.completed',
                  payload: { user_id: 1, module_id: 2, attempt_id: attemptId++ },
                },
                headers: { authorization: write },
              });
              if (res.status === 200) {
                acknowledged.push(res.body.data.id as string);
                if (killed && instance !== instances[2]) answeredAfterKill++;
              }
            } catch {
              // The killed instance: its connections fail.
            }
          }
        };
        const senders = [0, 1, 2, 3].map(sender);
        // Poll, do not sleep: kill once the load is flowing.
        while (acknowledged.length < 30) await new Promise((r) => setTimeout(r, 10));
        instances[2].child.kill('SIGKILL');
        killed = true;
        const before = acknowledged.length;
        while (answeredAfterKill < 30) await new Promise((r) => setTimeout(r, 10));
        stop = true;
        await Promise.all(senders);
        expect(acknowledged.length).toBeGreaterThan(before);

        const listed: string[] = [];
        for (let page = 1; ; page++) {
          const res = await call(
            instances[page % 2],
            'GET',
            `/v2/webhooks?result_mode[mode]=paginated&result_mode[attributes][limit]=100&result_mode[attributes][page]=${page}`,
            { headers: { authorization: read } },
          );
          expect(res.status).toBe(200);
          listed.push(...res.body.data.map((e: { id: string }) => e.id));
          if (page >= res.body.meta.last_page) break;
        }
        expect(new Set(listed).size).toBe(listed.length);
        const listedSet = new Set(listed);
        expect(acknowledged.filter((id) => !listedSet.has(id))).toEqual([]);
      },
      CASE_TIMEOUT_MS,
    );
  },
);
