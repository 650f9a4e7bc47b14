import type { AddressInfo } from 'node:net';
import { randomBytes, scrypt } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { User } from '../../src/auth/user.entity.js';
import { createClient, createUser, TestClient } from '../factories/client.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { errors, oauthErrors } from '../support/responses.js';
import { UNTHROTTLED } from './limits.js';

/**
 * docs/contract.md §2: no request stalls beyond 5 s. Password checks are slow by design (scrypt
 * on cores − 1 threads): a flood of wrong passwords from a few addresses, each address within
 * its limits, must not hold up another caller's grant; what the threads cannot serve in time is
 * refused at once, with Retry-After.
 *
 * Counted, not timed: the real grant waits for at most one hash per flooding address (they take
 * turns), so only a handful of the flood's hashed answers may come out while it waits. Served in
 * arrival order instead, it would wait for every check the flood had queued.
 */
describe('password grants under a flood of wrong passwords', () => {
  let t: TestApp;
  let client: TestClient;
  beforeAll(async () => {
    t = await startTestApp({ env: { TRUST_PROXY: 'loopback', ...UNTHROTTLED } });
    client = await createClient(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves a real grant after at most one hash per flooding address, and answers the flood with invalid_grant or an immediate 429/503 with Retry-After', async () => {
    const user = await createUser(t);
    // fetch (undici) rather than supertest: the flood's client side shares this process with
    // the server, and should take as little of it as it can.
    const { port } = (t.http.listening ? t.http : t.http.listen(0)).address() as AddressInfo;
    /** The flood's answers that took a hash (invalid_grant), in the order they came. */
    let hashed = 0;
    const grant = async (address: string, username: string, password: string) => {
      const res = await fetch(`http://127.0.0.1:${port}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
        body: JSON.stringify({
          grant_type: 'password',
          username,
          password,
          scope: 'customers:read',
          client_id: client.clientId,
          client_secret: client.clientSecret,
        }),
      });
      if (res.status === 400) hashed++;
      return { status: res.status, headers: res.headers, body: (await res.json()) as unknown };
    };
    // Wrong passwords from 4 addresses, 40 each per hashing thread, for 40 users whose stored
    // hashes cost twice the default (N = 2^15: the parameters travel with a hash), each address
    // and username within its limits: one after the other, the last would wait 8 s and more
    // (scrypt at N = 2^15 takes 50 ms on an idle core here, 200 ms and more on a busy one).
    // Taking turns, the real grant waits for one hash per flooding address: 4, so that even on
    // a machine busy enough to make a hash take 0.8 s it still starts within the 4 s budget.
    const costly = await costlyUsers(40);
    const threads = Math.max(1, availableParallelism() - 1);
    const count = 4 * 40 * threads;
    const flood = Array.from({ length: count }, (_, i) =>
      grant(`198.51.100.${(i % 4) + 1}`, costly[i % costly.length], 'wrong password'),
    );
    // The real grant arrives once the flood is in (its first answers are out).
    await Promise.race(flood);
    const hashedBefore = hashed;
    const real = await grant('192.0.2.7', user.username, user.password);
    const hashedMeanwhile = hashed - hashedBefore;
    expect(real.status).toBe(200);
    // One turn of the 4 flooding lanes, the hashes running when it arrived and while its token
    // is issued, and a few answers on their way to this client at either end (it shares this
    // process with the server; on a machine busy with other work, up to 8 of them were seen).
    // Arrival order would make it wait for the whole queued flood: 4 s of hashes, 80 at 50 ms each.
    expect(hashedMeanwhile).toBeLessThanOrEqual(4 + 2 * threads + 8);

    for (const res of await Promise.all(flood)) {
      if (res.status === 400) {
        expect(res.body).toEqual(oauthErrors.invalidGrant);
      } else {
        expect({ status: res.status, body: res.body }).toEqual(
          res.status === 429
            ? { status: 429, body: errors.tooManyRequests }
            : { status: 503, body: oauthErrors.unavailable },
        );
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
    }
  }, 90_000);

  /** `count` users stored with scrypt at N = 2^15; resolves to their usernames. */
  async function costlyUsers(count: number): Promise<string[]> {
    const usernames: string[] = [];
    for (let i = 0; i < count; i++) {
      const salt = randomBytes(16);
      const key = await new Promise<Buffer>((resolve, reject) =>
        scrypt(
          'their password',
          salt,
          32,
          { N: 32768, r: 8, p: 1, maxmem: 64 << 20 },
          (error, derived) => (error ? reject(error) : resolve(derived)),
        ),
      );
      const username = `costly-${i}-${randomBytes(3).toString('hex')}`;
      const hash = ['scrypt', 32768, 8, 1, salt.toString('base64url'), key.toString('base64url')];
      await t.db
        .getRepository(User)
        .insert({ username, passwordHash: hash.join('$'), createdAt: Date.now() });
      usernames.push(username);
    }
    return usernames;
  }
});
