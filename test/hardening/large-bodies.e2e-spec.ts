import { jest } from '@jest/globals';
import request from 'supertest';
import { processMemory as memory } from '../../src/common/memory-budget.js';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { senderHeaders } from '../support/auth.js';
import { errors } from '../support/responses.js';
import { until } from '../support/until.js';

/**
 * Large request bodies (64 KiB up to the 1 MiB limit) take room in the process's memory budget
 * before they are read, 24 bytes for each of their bytes (what JSON.parse may make of them), and
 * give it back once answered: many at once wait in turn instead of exhausting the heap.
 */
describe('large request bodies and the memory budget', () => {
  let t: TestApp;
  let write: string;
  beforeAll(async () => {
    t = await startTestApp();
    ({ write } = await senderHeaders(t));
  });
  afterAll(async () => {
    await t.close();
  });

  const send = (body: object) =>
    request(t.http).post('/v2/webhooks').set('authorization', write).send(body);
  const large = () => attemptCompleted({ filler: 'x'.repeat(200_000) } as object);

  it('counts a large body at 24 bytes a byte while it is handled, and gives it back', async () => {
    const acquire = jest.spyOn(memory, 'acquire');
    try {
      const body = large();
      await send(body).expect(200);
      expect(acquire.mock.calls).toEqual([[24 * Buffer.byteLength(JSON.stringify(body))]]);
      await until(() => memory.held === 0, 15_000);
      // A small body is not counted.
      await send(attemptCompleted()).expect(200);
      expect(acquire).toHaveBeenCalledTimes(1);
    } finally {
      acquire.mockRestore();
    }
  });

  it('answers 503 with Retry-After, unread, a large body that found no room in time; small ones pass meanwhile', async () => {
    const hold = await memory.acquire(memory.limit);
    try {
      const refused = send(large());
      // Small bodies are not held up by the wait.
      await send(attemptCompleted()).expect(200);
      // The token is checked before the body (CONTRACT §2): a missing one is 401 at once.
      const anonymous = await request(t.http).post('/v2/webhooks').send(large());
      expect({ status: anonymous.status, body: anonymous.body }).toEqual({
        status: 401,
        body: errors.unauthenticated,
      });
      const res = await refused;
      expect({ status: res.status, body: res.body }).toEqual({
        status: 503,
        body: errors.databaseUnavailable,
      });
      expect(res.headers['retry-after']).toBe('1');
      expect(res.headers['x-request-id']).toBeTruthy();
    } finally {
      hold();
    }
    await send(large()).expect(200);
  }, 30_000);
});
