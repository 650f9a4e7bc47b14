import request from 'supertest';
import { WebhookEvent } from '../../src/webhooks/webhook-event.entity.js';
import { WebhookProcessor } from '../../src/webhooks/webhook-processor.js';
import { WebhookRegistry } from '../../src/webhooks/webhook-registry.js';
import { startTestApp, TestApp } from '../support/app.js';
import { senderHeaders } from '../support/auth.js';
import { errors } from '../support/responses.js';
import { CREATE_TEST_JOBS, FlakyEventModule, FlakySwitch } from './flaky-event.module.js';

describe('a failing webhook handler (test-only event module)', () => {
  let t: TestApp;
  let flaky: FlakySwitch;
  let write: string;
  let read: string;
  beforeAll(async () => {
    t = await startTestApp({ imports: [FlakyEventModule] });
    await t.db.query(CREATE_TEST_JOBS);
    flaky = t.app.get(FlakySwitch);
    ({ write, read } = await senderHeaders(t));
  });
  afterAll(async () => {
    await t.close();
  });
  beforeEach(() => {
    flaky.failing = true;
    flaky.failingJobs.clear();
    flaky.runs = 0;
  });

  const deliver = (jobId: number) =>
    request(t.http)
      .post('/v2/webhooks')
      .set('authorization', write)
      .send({ event: 'test.job.finished', payload: { job_id: jobId } });
  const row = (id: string) => t.db.getRepository(WebhookEvent).findOneByOrFail({ id });
  const jobs = async (jobId: number) =>
    ((await t.db.query('SELECT job_id FROM test_jobs')) as { job_id: number }[]).filter(
      (r) => Number(r.job_id) === jobId,
    ).length;

  it('is accepted as an event, and listed by GET /v2/webhooks/events', async () => {
    const res = await request(t.http)
      .get('/v2/webhooks/events')
      .set('authorization', read)
      .expect(200);
    const events = res.body.data.map((e: { event: string }) => e.event);
    expect(events).toContain('test.job.finished');
    expect(events).toEqual(t.app.get(WebhookRegistry).events());
  });

  it('validates its payload with its own DTO', async () => {
    const res = await request(t.http)
      .post('/v2/webhooks')
      .set('authorization', write)
      .send({ event: 'test.job.finished', payload: { job_id: '1' } })
      .expect(422);
    expect(res.body).toEqual(
      errors.invalid({ 'payload.job_id': ['The job_id must be a positive integer.'] }),
    );
    expect(flaky.runs).toBe(0);
  });

  it('answers 500 with the id, keeps the event as failed, rolls its writes back; a redelivery after the fix processes it', async () => {
    const failed = await deliver(1).expect(500);
    const id = failed.body.id as string;
    expect(failed.body).toEqual(errors.webhookFailed(id));
    expect(await row(id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: 'job 1: downstream unavailable',
      processedAt: null,
    });
    expect(await jobs(1)).toBe(0);

    const listed = await request(t.http)
      .get('/v2/webhooks')
      .query({ status: 'failed', event: 'test.job.finished' })
      .set('authorization', read)
      .expect(200);
    expect(listed.body.data).toEqual([
      expect.objectContaining({
        id,
        status: 'failed',
        attempts: 1,
        last_error: 'job 1: downstream unavailable',
        processed_at: null,
      }),
    ]);

    // Still broken: the same event fails again, counted on the same row.
    await deliver(1).expect(500, errors.webhookFailed(id));
    expect(await row(id)).toMatchObject({ status: 'failed', attempts: 2 });

    flaky.failing = false;
    const fixed = await deliver(1).expect(200);
    expect(fixed.body.data).toMatchObject({ id, status: 'processed' });
    expect(await row(id)).toMatchObject({ status: 'processed', attempts: 3, lastError: null });
    expect((await row(id)).processedAt).toBeInstanceOf(Date);
    expect(await jobs(1)).toBe(1);

    // Processed now: further redeliveries are answered, not run.
    await deliver(1).expect(200);
    expect(flaky.runs).toBe(3);
    expect(
      await t.db
        .getRepository(WebhookEvent)
        .countBy({ event: 'test.job.finished', dedupeKey: 'natural:1' }),
    ).toBe(1);
  });

  it('runs a failed event once when 20 redeliveries arrive together after the fix', async () => {
    const id = (await deliver(2).expect(500)).body.id as string;
    flaky.failing = false;
    flaky.runs = 0;

    const responses = await Promise.all(Array.from({ length: 20 }, () => deliver(2)));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(responses.map((r) => r.body.data.id))).toEqual(new Set([id]));
    expect(flaky.runs).toBe(1);
    expect(await row(id)).toMatchObject({ status: 'processed', attempts: 2 });
    expect(await jobs(2)).toBe(1);
  });

  it('replays a failed event once when two replays run together; the one that lost it says skipped', async () => {
    const id = (await deliver(7).expect(500)).body.id as string;
    flaky.failing = false;
    flaky.runs = 0;

    const processor = t.app.get(WebhookProcessor);
    const outcomes = await Promise.all([processor.replay(id), processor.replay(id)]);
    expect(outcomes.map((outcome) => outcome.result).sort()).toEqual(['processed', 'skipped']);
    expect(flaky.runs).toBe(1);
    expect(await row(id)).toMatchObject({ status: 'processed', attempts: 2 });
    expect(await jobs(7)).toBe(1);
  });

  it('keeps one failed row for 20 simultaneous failing deliveries, counting every run', async () => {
    const responses = await Promise.all(Array.from({ length: 20 }, () => deliver(3)));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(500));
    const ids = new Set(responses.map((r) => r.body.id));
    expect(ids.size).toBe(1);
    const [id] = ids;
    expect(await row(id)).toMatchObject({ status: 'failed', attempts: flaky.runs });
    expect(flaky.runs).toBe(20);
    expect(await jobs(3)).toBe(0);
  });

  it('answers deliveries sent together each on its own: failing handlers fail alone', async () => {
    flaky.failing = false;
    flaky.failingJobs = new Set([42, 45]);
    const jobIds = Array.from({ length: 8 }, (_, i) => 40 + i);
    const responses = await Promise.all(jobIds.map((jobId) => deliver(jobId)));

    expect(responses.map((r) => r.status)).toEqual(
      jobIds.map((jobId) => (flaky.failingJobs.has(jobId) ? 500 : 200)),
    );
    expect(flaky.runs).toBe(8);
    for (const [i, jobId] of jobIds.entries()) {
      const failing = flaky.failingJobs.has(jobId);
      const id = (failing ? responses[i].body.id : responses[i].body.data.id) as string;
      expect(await row(id)).toMatchObject({
        event: 'test.job.finished',
        dedupeKey: `natural:${jobId}`,
        status: failing ? 'failed' : 'processed',
        attempts: 1,
      });
      // A failing handler's own write is undone; the others' writes are kept.
      expect(await jobs(jobId)).toBe(failing ? 0 : 1);
    }
  });
});
