import { jest } from '@jest/globals';
import { once } from 'node:events';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/index.js';
import { CompletedAttempt } from '../../src/learning/completed-attempt.entity.js';
import { WebhookEvent } from '../../src/webhooks/webhook-event.entity.js';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { ServerProcess, startServer } from '../support/processes.js';
import { remoteAuthHeader } from '../support/remote-auth.js';

// Two start-ups of the built server and a few thousand requests, on a machine that may be busy.
jest.setTimeout(120_000);

const CONCURRENCY = 32;
const KILL_AFTER_ACKS = 300;

interface Outcome {
  attemptId: number;
  /** HTTP status, or null when the connection died first (outcome unknown to the sender). */
  status: number | null;
  id?: string;
}

/**
 * Once a 200 is sent the event survives a crash (docs/contract.md §6): the real server (dist/) in a child
 * process on a file database, a stream of deliveries with many in flight (some of them
 * redeliveries), SIGKILL mid-stream, a restart on the same database, and the sender's retries.
 */
describe('webhook intake across a crash (SIGKILL)', () => {
  let database: TestDatabase;
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      await server.stop('SIGKILL');
    }
    await database.drop();
  });

  it('keeps every acknowledged event, processed exactly once', async () => {
    // The restart listens on another port: the issuer is set, as a deployment sets its public URL
    // (by default it follows HOST and PORT), so that tokens issued before the crash stay valid.
    const env = {
      DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      TOKEN_ISSUER: 'http://crash-test.local',
    };
    server = await startServer(env);
    const auth = await remoteAuthHeader(server, database.url, ['webhooks:write']);
    const deliver = async (baseUrl: string, attemptId: number): Promise<Outcome> => {
      try {
        const res = await fetch(`${baseUrl}/v2/webhooks`, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/json' },
          body: JSON.stringify({
            event: 'learning.attempt.completed',
            payload: { user_id: 1, module_id: 2, attempt_id: attemptId },
          }),
        });
        const body = (await res.json().catch(() => ({}))) as { data?: { id: string } };
        return { attemptId, status: res.status, id: body.data?.id };
      } catch {
        return { attemptId, status: null };
      }
    };

    // The stream: new attempts, and every fifth request a redelivery of a recent one. Each
    // sender goes on until the dead server fails one of its requests: answers can come back in a
    // burst (deliveries received together share one commit on SQLite), so the kill may find no
    // request in flight, and the stream must not stop at the kill.
    const outcomes: Outcome[] = [];
    const exited = once(server.child, 'exit');
    let sent = 0;
    let acks = 0;
    const sender = async (baseUrl: string) => {
      for (;;) {
        const n = ++sent;
        const attemptId = n % 5 === 0 && n > 50 ? n - 40 : n;
        const outcome = await deliver(baseUrl, attemptId);
        outcomes.push(outcome);
        if (outcome.status === 200 && ++acks === KILL_AFTER_ACKS) server!.child.kill('SIGKILL');
        if (outcome.status === null) return;
      }
    };
    const baseUrl = server.baseUrl;
    await Promise.all(Array.from({ length: CONCURRENCY }, () => sender(baseUrl)));
    await exited;

    const acked = outcomes.filter((o) => o.status === 200);
    expect(acked.length).toBeGreaterThanOrEqual(KILL_AFTER_ACKS);
    expect(outcomes.filter((o) => o.status === null).length).toBeGreaterThan(0);
    expect(outcomes.every((o) => o.status === 200 || o.status === null)).toBe(true);
    const ackedIds = new Map<number, string>();
    for (const { attemptId, id } of acked) {
      // A redelivery answered before the crash carries the first delivery's id.
      if (id && ackedIds.has(attemptId)) expect(id).toBe(ackedIds.get(attemptId));
      if (id) ackedIds.set(attemptId, id);
    }

    // Restarted on the same database, before any retry: every acknowledged event is there.
    server = await startServer(env);
    const dataSource = new DataSource(buildDataSourceOptions({ url: database.url }));
    await dataSource.initialize();
    try {
      const stored = new Map(
        (await dataSource.getRepository(WebhookEvent).find()).map((row) => [row.dedupeKey, row]),
      );
      const recorded = new Set(
        (await dataSource.getRepository(CompletedAttempt).find()).map((row) => row.attemptId),
      );
      for (const [attemptId, id] of ackedIds) {
        expect(stored.get(`natural:${attemptId}`)).toMatchObject({
          id,
          status: 'processed',
          attempts: 1,
        });
        expect(recorded.has(attemptId)).toBe(true);
      }
      // Nothing half-done: every stored event has its effect, and every effect its event.
      expect([...stored.values()].every((row) => row.status === 'processed')).toBe(true);
      expect(new Set([...stored.keys()])).toEqual(
        new Set([...recorded].map((attemptId) => `natural:${attemptId}`)),
      );

      // The senders retry everything: the same ids come back, nothing is processed twice.
      const attemptIds = [...new Set(outcomes.map((o) => o.attemptId))];
      const retries: Outcome[] = [];
      for (let i = 0; i < attemptIds.length; i += CONCURRENCY) {
        const batch = attemptIds.slice(i, i + CONCURRENCY);
        retries.push(...(await Promise.all(batch.map((a) => deliver(server!.baseUrl, a)))));
      }
      expect(retries.filter((r) => r.status !== 200)).toEqual([]);
      for (const { attemptId, id } of retries) {
        if (ackedIds.has(attemptId)) expect(id).toBe(ackedIds.get(attemptId));
      }
      expect(await dataSource.getRepository(WebhookEvent).count()).toBe(attemptIds.length);
      expect(await dataSource.getRepository(CompletedAttempt).count()).toBe(attemptIds.length);
      expect(await dataSource.getRepository(WebhookEvent).countBy({ attempts: 1 })).toBe(
        attemptIds.length,
      );
    } finally {
      await dataSource.destroy();
    }
    expect(await server.stop()).toBe(0);
  });
});
