import request from 'supertest';
import { WebhookEvent } from '../../src/webhooks/webhook-event.entity.js';
import { usingPostgres } from '../support/database.js';
import { startTestApp, TestApp } from '../support/app.js';
import { senderHeaders } from '../support/auth.js';
import { errors } from '../support/responses.js';
import { WebhookProcessor } from '../../src/webhooks/webhook-processor.js';
import { WebhookRegistry } from '../../src/webhooks/webhook-registry.js';
import {
  CREATE_TEST_RUNS,
  HandlerRuns,
  HandlerRunsModule,
  RunPayload,
} from './handler-runs.module.js';

/**
 * A handler runs exactly once per accepted delivery, in the transaction that stores its event,
 * when deliveries arrive together and share a commit: one that throws is undone alone.
 */
describe('webhook handlers of deliveries sent together (test-only event module)', () => {
  let t: TestApp;
  let runs: HandlerRuns;
  let write: string;
  beforeAll(async () => {
    t = await startTestApp({ imports: [HandlerRunsModule] });
    await t.db.query(CREATE_TEST_RUNS);
    runs = t.app.get(HandlerRuns);
    ({ write } = await senderHeaders(t));
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => runs.reset());

  const deliver = (event: string, runId: number) =>
    request(t.http)
      .post('/v2/webhooks')
      .set('authorization', write)
      .send({ event, payload: { run_id: runId } });
  const written = async () =>
    (
      (await t.db.query('SELECT run_id, event FROM test_runs ORDER BY run_id')) as {
        run_id: number | string;
        event: string;
      }[]
    ).map((row) => ({ runId: Number(row.run_id), event: row.event }));
  const stored = async (runIds: number[]) =>
    (await t.db.getRepository(WebhookEvent).find({ order: { dedupeKey: 'ASC' } }))
      .filter((row) => runIds.some((id) => row.dedupeKey === `natural:${id}`))
      .map(({ event, dedupeKey, status, attempts }) => ({ event, dedupeKey, status, attempts }));

  it('runs each handler once; a throwing one fails alone, the others commit', async () => {
    // Three bursts of 18, one in three throwing, interleaved.
    const counted: number[] = [];
    const thrown: number[] = [];
    for (let burst = 0; burst < 3; burst++) {
      const sent = Array.from({ length: 18 }, (_, i) => {
        const runId = 1000 + burst * 100 + i;
        const event = i % 3 === 1 ? 'test.run.thrown' : 'test.run.counted';
        (event === 'test.run.thrown' ? thrown : counted).push(runId);
        return { event, runId };
      });
      const answers = await Promise.all(sent.map(({ event, runId }) => deliver(event, runId)));
      expect(answers.map((res) => res.status)).toEqual(
        sent.map(({ event }) => (event === 'test.run.thrown' ? 500 : 200)),
      );
      for (const [i, res] of answers.entries()) {
        if (res.status === 500) expect(res.body).toEqual(errors.webhookFailed(res.body.id));
        else expect(res.body.data).toMatchObject({ event: sent[i].event, status: 'processed' });
      }
    }

    expect(new Map([...runs.counted].sort())).toEqual(new Map(counted.map((id) => [id, 1])));
    expect(new Map([...runs.thrown].sort())).toEqual(new Map(thrown.map((id) => [id, 1])));
    expect(runs.blind).toEqual([]);
    expect(await written()).toEqual(counted.map((runId) => ({ runId, event: 'test.run.counted' })));
    const all = [...counted, ...thrown].sort();
    expect(await stored(all)).toEqual(
      all.map((runId) => ({
        event: counted.includes(runId) ? 'test.run.counted' : 'test.run.thrown',
        dedupeKey: `natural:${runId}`,
        status: counted.includes(runId) ? 'processed' : 'failed',
        attempts: 1,
      })),
    );
  });

  it('runs a handler once for simultaneous redeliveries, beside a throwing one', async () => {
    // Five deliveries of one counted event and of one throwing event, and others between them.
    const sent = Array.from({ length: 5 }, (_, i) => [
      { event: 'test.run.counted', runId: 2000 },
      { event: 'test.run.thrown', runId: 2001 },
      { event: 'test.run.counted', runId: 2010 + i },
    ]).flat();
    const answers = await Promise.all(sent.map(({ event, runId }) => deliver(event, runId)));

    expect(answers.map((res) => res.status)).toEqual(
      sent.map(({ event }) => (event === 'test.run.thrown' ? 500 : 200)),
    );
    // Every delivery of one event answers with the one stored event's id.
    const idsOf = (runId: number) =>
      new Set(
        answers
          .filter((_, i) => sent[i].runId === runId)
          .map((res) => (res.body.data?.id ?? res.body.id) as string),
      ).size;
    expect([idsOf(2000), idsOf(2001)]).toEqual([1, 1]);
    // The counted event ran once; each delivery of the throwing one was accepted and ran once.
    expect(new Map([...runs.counted].sort())).toEqual(
      new Map([2000, 2010, 2011, 2012, 2013, 2014].map((id) => [id, 1])),
    );
    expect(runs.thrown).toEqual(new Map([[2001, 5]]));
    expect(runs.blind).toEqual([]);
    expect((await written()).filter(({ runId }) => runId >= 2000)).toEqual(
      [2000, 2010, 2011, 2012, 2013, 2014].map((runId) => ({ runId, event: 'test.run.counted' })),
    );
    const [failed] = await stored([2001]);
    expect(failed).toEqual({
      event: 'test.run.thrown',
      dedupeKey: 'natural:2001',
      status: 'failed',
      attempts: 5,
    });
  });

  it('runs each handler of deliveries received together once (one shared commit on SQLite)', async () => {
    // Handed to the processor in one turn of the event loop, as validated deliveries: they all
    // join one group, deterministically (over HTTP, how many arrive together varies).
    const processor = t.app.get(WebhookProcessor);
    const registry = t.app.get(WebhookRegistry);
    const sent = [3005, 3001, 3004, 3002, 3003, 3001].map((runId) => ({
      runId,
      event: runId % 2 === 0 ? 'test.run.thrown' : 'test.run.counted',
    }));
    const rows = await Promise.all(
      sent.map(({ runId, event }) =>
        processor.receive(
          {
            webhook: registry.find(event)!,
            payload: Object.assign(new RunPayload(), { run_id: runId }),
            stored: JSON.stringify({ run_id: runId }),
          },
          { clientId: 'same-turn' },
        ),
      ),
    );

    expect(rows.map(({ status }) => status)).toEqual(
      sent.map(({ event }) => (event === 'test.run.thrown' ? 'failed' : 'processed')),
    );
    // The redelivery of 3001 in the same group found the first one's event.
    expect(rows[5].id).toBe(rows[1].id);
    // SQLite: one transaction for the group (PostgreSQL runs each in its own, side by side).
    if (!usingPostgres()) expect(new Set(runs.managers).size).toBe(1);
    expect(new Map([...runs.counted].sort())).toEqual(
      new Map([
        [3001, 1],
        [3003, 1],
        [3005, 1],
      ]),
    );
    expect(new Map([...runs.thrown].sort())).toEqual(
      new Map([
        [3002, 1],
        [3004, 1],
      ]),
    );
    expect(runs.blind).toEqual([]);
    expect((await written()).filter(({ runId }) => runId >= 3000)).toEqual(
      [3001, 3003, 3005].map((runId) => ({ runId, event: 'test.run.counted' })),
    );
    expect(await stored([3001, 3002, 3003, 3004, 3005])).toEqual(
      [3001, 3002, 3003, 3004, 3005].map((runId) => ({
        event: runId % 2 === 0 ? 'test.run.thrown' : 'test.run.counted',
        dedupeKey: `natural:${runId}`,
        status: runId % 2 === 0 ? 'failed' : 'processed',
        attempts: 1,
      })),
    );
  });
});
