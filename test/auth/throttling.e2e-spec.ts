import request from 'supertest';
import { processMemory as memory } from '../../src/common/memory-budget.js';
import { TooManyAttemptsException } from '../../src/auth/oauth.exceptions.js';
import { ThrottlingService } from '../../src/auth/throttling.service.js';
import { createClient, createUser, TestClient } from '../factories/client.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { errors, noStore, oauthErrors } from '../support/responses.js';

/**
 * docs/contract.md §3 limits, lowered: 5 requests a minute from one address, 3 failed attempts a minute
 * for one client id or one username from one address, 5 for one username from all addresses.
 * Each test speaks from its own address (X-Forwarded-For, believed from the loopback proxy here)
 * so that the tests do not share the per-address budget.
 */
describe('throttling of the token endpoint', () => {
  let t: TestApp;
  let client: TestClient;
  let nextAddress = 1;
  beforeAll(async () => {
    t = await startTestApp({
      env: {
        TRUST_PROXY: 'loopback',
        THROTTLE_TOKEN_PER_IP: '5',
        THROTTLE_TOKEN_FAILURES_PER_CLIENT: '3',
        THROTTLE_TOKEN_FAILURES_PER_USER: '3',
        THROTTLE_TOKEN_FAILURES_PER_USER_ALL_ADDRESSES: '5',
      },
    });
    client = await createClient(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const fromNewAddress = () => {
    const address = `203.0.113.${nextAddress++}`;
    return (path = '/oauth/token') => request(t.http).post(path).set('x-forwarded-for', address);
  };

  const expectThrottled = (res: request.Response) => {
    expect({ status: res.status, body: res.body }).toEqual({
      status: 429,
      body: errors.tooManyRequests,
    });
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(res.headers['cache-control']).toBe(noStore['cache-control']);
    expect(res.headers.pragma).toBe(noStore.pragma);
  };

  const credentials = (c: TestClient, secret = c.clientSecret) => ({
    client_id: c.clientId,
    client_secret: secret,
  });

  it('refuses the 6th request a minute from one address, whatever it is, and not other addresses', async () => {
    const post = fromNewAddress();
    for (let i = 0; i < 5; i++) {
      await post().send({ grant_type: 'client_credentials' }).expect(400);
    }
    expectThrottled(
      await post().send({
        grant_type: 'client_credentials',
        scope: 'customers:read',
        ...credentials(client),
      }),
    );
    await fromNewAddress()()
      .send({ grant_type: 'client_credentials', scope: 'customers:read', ...credentials(client) })
      .expect(200);
  });

  it('counts each OAuth endpoint apart for an address', async () => {
    const post = fromNewAddress();
    for (let i = 0; i < 5; i++) await post().send({}).expect(400);
    expectThrottled(await post().send({}));
    await post('/oauth/introspect')
      .send({ token: 'x', ...credentials(client) })
      .expect(200);
  });

  it('counts refused bodies too, and answers a throttled address at once, whatever the memory budget holds', async () => {
    const post = fromNewAddress();
    // Over 16 KiB, and malformed: refused before the route runs, and counted all the same.
    await post()
      .send({ grant_type: 'client_credentials', filler: 'x'.repeat(2 ** 20) })
      .expect(413);
    for (let i = 0; i < 4; i++) {
      await post().set('content-type', 'application/json').send('{"grant_type":').expect(400);
    }
    const hold = await memory.acquire(memory.limit);
    try {
      // The largest body read here never waits for room: the throttle answers at once.
      expectThrottled(
        await post().send({ grant_type: 'client_credentials', filler: 'x'.repeat(16_000) }),
      );
    } finally {
      hold();
    }
  });

  it('counts a refused body once, though its address is checked both before the body and by the route', async () => {
    const post = fromNewAddress();
    const large = { grant_type: 'client_credentials', filler: 'x'.repeat(200_000) };
    for (let i = 0; i < 5; i++) await post().send(large).expect(413);
    expectThrottled(await post().send(large));
  });

  it('counts a request whose client has gone, and so has no address any more, under none', async () => {
    const throttling = t.app.get(ThrottlingService);
    for (let i = 0; i < 5; i++) await throttling.countRequest('/oauth/token', undefined);
    await expect(throttling.countRequest('/oauth/token', undefined)).rejects.toBeInstanceOf(
      TooManyAttemptsException,
    );
  });

  it('after 3 failed client authentications from an address, refuses the client id there for the minute even with the right secret, and nowhere else', async () => {
    const target = await createClient(t);
    const post = fromNewAddress();
    for (let i = 0; i < 3; i++) {
      const res = await post().send({
        grant_type: 'client_credentials',
        scope: 'customers:read',
        ...credentials(target, 'guess'),
      });
      expect(res.body).toEqual(oauthErrors.invalidClient);
    }
    expectThrottled(
      await post().send({
        grant_type: 'client_credentials',
        scope: 'customers:read',
        ...credentials(target),
      }),
    );
    // Client authentication at the other endpoints shares the count.
    expectThrottled(await post('/oauth/revoke').send({ token: 'x', ...credentials(target) }));
    // The same client from another address is not locked out (its id is public).
    await fromNewAddress()()
      .send({ grant_type: 'client_credentials', scope: 'customers:read', ...credentials(target) })
      .expect(200);
    // Another client from the throttled address is not affected either.
    await post()
      .send({ grant_type: 'client_credentials', scope: 'customers:read', ...credentials(client) })
      .expect(200);
  });

  it('holds under a concurrent burst of wrong secrets from one address: at most 3 are checked, the rest are 429', async () => {
    const target = await createClient(t);
    // 5 at once: the whole per-address budget of the token endpoint, so every 429 is the
    // failure limit's.
    const post = fromNewAddress();
    const burst = await Promise.all(
      Array.from({ length: 5 }, () =>
        post().send({
          grant_type: 'client_credentials',
          scope: 'customers:read',
          ...credentials(target, 'guess'),
        }),
      ),
    );
    const statuses = burst.map((res) => res.status).sort();
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    for (const res of burst.filter((r) => r.status === 429)) expectThrottled(res);
    expectThrottled(await post('/oauth/introspect').send({ token: 'x', ...credentials(target) }));
  });

  it('throttles guesses at unknown client ids by id too', async () => {
    const post = fromNewAddress();
    const unknown = { client_id: 'no-such-client', client_secret: 'guess' };
    for (let i = 0; i < 3; i++) {
      await post()
        .send({ grant_type: 'client_credentials', scope: 'customers:read', ...unknown })
        .expect(401);
    }
    expectThrottled(
      await post().send({ grant_type: 'client_credentials', scope: 'customers:read', ...unknown }),
    );
  });

  it('after 3 wrong passwords for a username, refuses that username for the minute, not the client', async () => {
    const user = await createUser(t);
    const other = await createUser(t);
    const post = fromNewAddress();
    const attempt = (username: string, password: string, send = post) =>
      send().send({
        grant_type: 'password',
        scope: 'customers:read',
        username,
        password,
        ...credentials(client),
      });
    for (let i = 0; i < 3; i++) {
      expect((await attempt(user.username, 'guess')).body).toEqual(oauthErrors.invalidGrant);
    }
    expectThrottled(await attempt(user.username, user.password));
    await attempt(other.username, other.password, fromNewAddress()).expect(200);
  });

  it('after 5 wrong passwords for a username from all addresses together, refuses it everywhere', async () => {
    const user = await createUser(t);
    const attempt = (password: string) =>
      fromNewAddress()().send({
        grant_type: 'password',
        scope: 'customers:read',
        username: user.username,
        password,
        ...credentials(client),
      });
    for (let i = 0; i < 5; i++) {
      expect((await attempt('guess')).body).toEqual(oauthErrors.invalidGrant);
    }
    expectThrottled(await attempt(user.password));
  });

  it('does not count successes: a busy client is never locked out by them', async () => {
    const busy = await createClient(t);
    for (let i = 0; i < 8; i++) {
      await fromNewAddress()()
        .send({ grant_type: 'client_credentials', scope: 'customers:read', ...credentials(busy) })
        .expect(200);
    }
    // Past each failure limit from one place: 4 successes from one address (limit 3 per client
    // id and address), 6 password grants for one username (limit 5 from all addresses).
    const post = fromNewAddress();
    for (let i = 0; i < 4; i++) {
      await post()
        .send({ grant_type: 'client_credentials', scope: 'customers:read', ...credentials(busy) })
        .expect(200);
    }
    const user = await createUser(t);
    for (let i = 0; i < 6; i++) {
      await fromNewAddress()()
        .send({
          grant_type: 'password',
          scope: 'customers:read',
          username: user.username,
          password: user.password,
          ...credentials(client),
        })
        .expect(200);
    }
  });
});
