import request from 'supertest';
import { CompletedAttempt } from '../../src/learning/completed-attempt.entity.js';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';
import { startServer, type ServerProcess } from '../support/processes.js';
import { remoteAuthHeader } from '../support/remote-auth.js';
import { errors } from '../support/responses.js';

// One app for the file: AppModule reads its configuration once per test file.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

/**
 * What a seventh outside review found: on PostgreSQL, times were stored and read in the process's
 * local time (`timestamp` columns), so a server started with another TZ showed an event received
 * hours away from when it was, and wrote times that other instances read hours off.
 */
describe('seventh outside review: stored times do not depend on the time zone', () => {
  let tokyo: ServerProcess;
  beforeAll(async () => {
    tokyo = await startServer({ DATABASE_URL: t.database.url, TZ: 'Asia/Tokyo' });
  }, 90_000);
  afterAll(async () => {
    await tokyo?.stop();
  });

  it('stores UTC, and servers in different zones show the same instants', async () => {
    const scopes = ['webhooks:write', 'webhooks:read'] as const;
    const here = await authHeader(t, [...scopes]);
    const there = await remoteAuthHeader(tokyo, t.database.url, [...scopes]);
    const send = async (http: string | TestApp['http'], auth: string) => {
      const body = attemptCompleted();
      const before = Date.now();
      const res = await request(http)
        .post('/v2/webhooks')
        .set('authorization', auth)
        .send(body)
        .expect(200);
      return { body, before, after: Date.now(), data: res.body.data as Record<string, string> };
    };
    // Within the request's time, to the second (PostgreSQL keeps microseconds, the API ms).
    const within = (iso: string, { before, after }: { before: number; after: number }) => {
      const at = Date.parse(iso);
      expect(at).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
      expect(at).toBeLessThanOrEqual(after);
    };
    const storedText = async (id: string) => {
      const placeholder = t.database.url.startsWith('postgres') ? '$1' : '?';
      const [row] = (await t.db.query(
        `SELECT CAST(received_at AS TEXT) AS received_at FROM webhook_events WHERE id = ${placeholder}`,
        [id],
      )) as { received_at: string }[];
      return `${row.received_at.replace(' ', 'T')}Z`;
    };

    const fromTokyo = await send(tokyo.baseUrl, there);
    within(fromTokyo.data.received_at, fromTokyo);
    // What the database holds is UTC, read as text (no driver in between to convert it).
    within(await storedText(fromTokyo.data.id), fromTokyo);
    const attempt = await t.db
      .getRepository(CompletedAttempt)
      .findOneByOrFail({ attemptId: fromTokyo.body.payload.attempt_id });
    within(attempt.recordedAt.toISOString(), fromTokyo);

    const fromHere = await send(t.http, here);
    within(await storedText(fromHere.data.id), fromHere);

    // Each server reads the other's event as the other answered it.
    const readHere = await request(t.http)
      .get(`/v2/webhooks/${fromTokyo.data.id}`)
      .set('authorization', there)
      .expect(200);
    expect(readHere.body.data.received_at).toBe(fromTokyo.data.received_at);
    const readThere = await request(tokyo.baseUrl)
      .get(`/v2/webhooks/${fromHere.data.id}`)
      .set('authorization', here)
      .expect(200);
    expect(readThere.body.data.received_at).toBe(fromHere.data.received_at);
  }, 60_000);
});

/**
 * What a seventh outside review found: a path with an empty segment where a route has its id
 * (`/v2/customers/`) was 401 without a token and 404 with one; an unknown route is 404 whatever
 * the token (docs/contract.md §2).
 */
describe('seventh outside review: an empty id is no route', () => {
  it.each([
    ['GET', '/v2/customers/'],
    ['GET', '/v2/customers//company'],
    ['PUT', '/v2/customers//company'],
    ['GET', '/v2/webhooks/'],
  ])('%s %s is 404 with no token, an ill-formed one and a valid one', async (method, path) => {
    const valid = await authHeader(t, ['customers:read', 'customers:write', 'webhooks:read']);
    for (const authorization of [undefined, 'Bearer', valid]) {
      const req = request(t.http)[method === 'PUT' ? 'put' : 'get'](path);
      if (authorization) req.set('authorization', authorization);
      const res = method === 'PUT' ? await req.send({ name: 'x' }) : await req;
      expect({ status: res.status, body: res.body }).toEqual({
        status: 404,
        body: errors.routeNotFound,
      });
    }
  });
});
