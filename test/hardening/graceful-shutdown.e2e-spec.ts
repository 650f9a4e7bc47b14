import { jest } from '@jest/globals';
import { once } from 'node:events';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/index.js';
import { CompletedAttempt } from '../../src/learning/completed-attempt.entity.js';
import { WebhookEvent } from '../../src/webhooks/webhook-event.entity.js';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { startServer } from '../support/processes.js';
import { remoteAuthHeader } from '../support/remote-auth.js';

// A server start, a token through the CLI and a stop: half a minute or more on a loaded machine.
jest.setTimeout(90_000);

describe('graceful shutdown (SIGTERM to the built server)', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('finishes in-flight webhooks, stops accepting, closes the database and exits 0 within 10 s', async () => {
    const server = await startServer({ DATABASE_URL: database.url, LOG_LEVEL: 'warn' });
    const auth = await remoteAuthHeader(server, database.url, ['webhooks:write']);
    const deliver = async (attemptId: number) => {
      try {
        const res = await fetch(`${server.baseUrl}/v2/webhooks`, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/json' },
          body: JSON.stringify({
            event: 'learning.attempt.completed',
            payload: { user_id: 1, module_id: 1, attempt_id: attemptId },
          }),
        });
        const body = (await res.json()) as Record<string, unknown>;
        return { attemptId, status: res.status, body, answeredAt: Date.now() };
      } catch {
        return { attemptId, status: null, body: null, answeredAt: Date.now() };
      }
    };

    const inFlight = Array.from({ length: 200 }, (_, i) => deliver(i + 1));
    await Promise.race(inFlight);
    const exited = once(server.child, 'exit');
    const termAt = Date.now();
    server.child.kill('SIGTERM');
    const results = await Promise.all(inFlight);
    const [code] = (await exited) as [number | null];
    // 0, not the 10 s watchdog's 1: the stop finished its requests and closed in time.
    expect(code).toBe(0);

    // Requests the server had taken in were answered 200, some of them after SIGTERM; requests
    // that reached it after SIGTERM (on kept-alive connections) were refused with a 503.
    const answered = results.filter((r) => r.status === 200);
    expect(answered.some((r) => r.answeredAt > termAt)).toBe(true);
    for (const r of results.filter((r) => r.status !== 200 && r.status !== null)) {
      expect({ status: r.status, body: r.body }).toEqual({
        status: 503,
        body: { message: 'The service is temporarily unavailable.' },
      });
    }
    // After the stop, nothing listens.
    await expect(fetch(`${server.baseUrl}/health`)).rejects.toThrow();

    // Every acknowledged webhook is stored and processed.
    const dataSource = new DataSource(buildDataSourceOptions({ url: database.url }));
    await dataSource.initialize();
    try {
      const events = await dataSource.getRepository(WebhookEvent).count();
      const effects = await dataSource.getRepository(CompletedAttempt).count();
      expect(events).toBe(answered.length);
      expect(effects).toBe(answered.length);
    } finally {
      await dataSource.destroy();
    }
  });
});
