import { jest } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { processMemory as memory } from '../../src/common/memory-budget.js';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { senderHeaders } from '../support/auth.js';
import { errors } from '../support/responses.js';
import { until } from '../support/until.js';

/**
 * Stored payloads of up to 1 MiB (docs/contract.md §6) in the webhook reads: sent as received,
 * and each page's payloads counted in the memory budget (processMemory) until the page has been sent.
 */
describe('large webhook payloads in GET /v2/webhooks', () => {
  let t: TestApp;
  let write: string;
  let read: string;
  /** What was sent, newest first (the list's order). */
  const sent: ReturnType<typeof attemptCompleted>[] = [];
  beforeAll(async () => {
    t = await startTestApp();
    ({ write, read } = await senderHeaders(t));
    // Just under the 1 MiB body limit each: 300,000 empty objects (20 of those: more than the
    // kernel's socket buffers hold), text with escapes, numbers in other spellings.
    const fillers: unknown[] = [
      ...Array.from({ length: 20 }, () => Array.from({ length: 300_000 }, () => ({}))),
      'é"\\\u0001✓'.repeat(50_000),
      { nested: [[1.5, -0, 1e21, null, true]], 'key "quoted"': 'x' },
    ];
    for (const filler of fillers) {
      const body = attemptCompleted({ filler } as object);
      await request(t.http).post('/v2/webhooks').set('authorization', write).send(body).expect(200);
      sent.unshift(body);
    }
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses with 422 a payload that takes more than 1 MiB once stored (numbers respelled), and stores nothing', async () => {
    // 200,000 × `1e20,` is under the 1 MiB body limit; stored, each is 21 digits.
    const body = JSON.stringify(attemptCompleted({ filler: [] } as object)).replace(
      '"filler":[]',
      `"filler":[${Array<string>(200_000).fill('1e20').join(',')}]`,
    );
    expect(Buffer.byteLength(body)).toBeLessThan(1024 * 1024);
    const before = await page(1).expect(200);
    const res = await request(t.http)
      .post('/v2/webhooks')
      .set('authorization', write)
      .set('content-type', 'application/json')
      .send(body);
    expect({ status: res.status, body: res.body }).toEqual({
      status: 422,
      body: errors.invalid({
        payload: ['The payload must be at most 1 MiB (1,048,576 bytes) as stored JSON.'],
      }),
    });
    expect((await page(1).expect(200)).body.meta.total).toBe(before.body.meta.total);
  });

  const page = (limit = 3) =>
    request(t.http)
      .get('/v2/webhooks')
      .query({ 'result_mode[attributes][limit]': limit })
      .set('authorization', read);

  it('sends each payload as it was received, unknown fields included', async () => {
    const res = await page().expect(200);
    expect(res.body.data.map((item: { payload: unknown }) => item.payload)).toEqual(
      sent.slice(0, 3).map((body) => JSON.parse(JSON.stringify(body.payload))),
    );
    expect(res.body.meta).toEqual({
      current_page: 1,
      from: 1,
      to: 3,
      last_page: 8,
      per_page: 3,
      total: 22,
    });
    const one = await request(t.http)
      .get(`/v2/webhooks/${res.body.data[0].id}`)
      .set('authorization', read)
      .expect(200);
    expect(one.body.data).toEqual(res.body.data[0]);
  });

  it("counts a page's payloads, as stored, in the memory budget, and gives them back once sent", async () => {
    const acquire = jest.spyOn(memory, 'acquire');
    try {
      await page(5).expect(200);
      const stored = sent.slice(0, 5).map((body) => JSON.stringify(body.payload).length);
      // 6 bytes of memory for each character (WebhooksService).
      expect(acquire.mock.calls).toEqual([[6 * stored.reduce((a, b) => a + b)]]);
      await until(() => memory.held === 0);

      // One event read by id: counted when large (the newest but two), not when small (the newest).
      const [small, , large] = (await page(3).expect(200)).body.data as { id: string }[];
      acquire.mockClear();
      for (const { id } of [small, large]) {
        await request(t.http).get(`/v2/webhooks/${id}`).set('authorization', read).expect(200);
      }
      expect(acquire.mock.calls).toEqual([[6 * stored[2]]]);
      await until(() => memory.held === 0);
    } finally {
      acquire.mockRestore();
    }
  });

  it('gives the room back when the client goes away before the answer has been read', async () => {
    const { port } = (t.http.listening ? t.http : t.http.listen(0)).address() as AddressInfo;
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        {
          port,
          host: '127.0.0.1',
          path: '/v2/webhooks?result_mode[attributes][limit]=22',
          headers: { authorization: read },
        },
        (res) => {
          expect(res.statusCode).toBe(200);
          // Gone after the first bytes, with most of the 19 MB answer unsent: held until then.
          res.once('data', () => {
            res.pause();
            until(() => memory.held > 6 * 15_000_000)
              .then(() => {
                req.destroy();
                resolve();
              })
              .catch(reject);
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
    await until(() => memory.held === 0);
  });
});
