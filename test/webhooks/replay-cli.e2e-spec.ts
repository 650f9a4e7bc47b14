import { jest } from '@jest/globals';
import request from 'supertest';
import { AttemptCompletedHandler } from '../../src/learning/attempt-completed.handler.js';
import { CompletedAttempt } from '../../src/learning/completed-attempt.entity.js';
import { WebhookEvent } from '../../src/webhooks/webhook-event.entity.js';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { authHeader } from '../support/auth.js';
import { runNode } from '../support/processes.js';
import { CREATE_TEST_JOBS, FlakyEventModule } from './flaky-event.module.js';

/** `webhooks:replay` as a user runs it: the built CLI (dist/) on the test's database file. */
// Each run boots the application in a child process: seconds each on a busy machine.
jest.setTimeout(90_000);

describe('CLI webhooks:replay', () => {
  let t: TestApp;
  let write: string;
  const cli = (...args: string[]) =>
    runNode('dist/src/cli.js', ['webhooks:replay', ...args], { DATABASE_URL: t.database.url });
  const row = (id: string) => t.db.getRepository(WebhookEvent).findOneByOrFail({ id });

  beforeAll(async () => {
    t = await startTestApp({ imports: [FlakyEventModule] });
    await t.db.query(CREATE_TEST_JOBS);
    write = await authHeader(t, ['webhooks:write']);
  });
  afterAll(async () => {
    await t.close();
  });

  /** A learning.attempt.completed event whose handler failed once (the LMS being down, say). */
  async function failedAttempt() {
    const handler = t.app.get(AttemptCompletedHandler);
    jest.spyOn(handler, 'handle').mockRejectedValueOnce(new Error('learning store unreachable'));
    const body = attemptCompleted();
    const res = await request(t.http)
      .post('/v2/webhooks')
      .set('authorization', write)
      .send(body)
      .expect(500);
    return { id: res.body.id as string, attemptId: body.payload.attempt_id };
  }

  it('--id re-runs one failed event and prints what happened; a second run skips it', async () => {
    const { id, attemptId } = await failedAttempt();
    expect(await row(id)).toMatchObject({ status: 'failed', attempts: 1 });

    const result = await cli('--id', id);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      processed: 1,
      failed: 0,
      skipped: 0,
      events: [
        {
          id,
          event: 'learning.attempt.completed',
          result: 'processed',
          status: 'processed',
          attempts: 2,
          last_error: null,
        },
      ],
    });
    expect(await row(id)).toMatchObject({ status: 'processed', attempts: 2, lastError: null });
    expect(await t.db.getRepository(CompletedAttempt).countBy({ attemptId })).toBe(1);

    const again = await cli('--id', id);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      processed: 0,
      skipped: 1,
      events: [{ id, result: 'skipped', status: 'processed', attempts: 2 }],
    });
  });

  it('--failed re-runs every failed event, reporting the ones that fail again', async () => {
    const learning = await failedAttempt();
    // The built CLI has no handler for the test-only event: it stays failed, with the reason.
    const job = (
      await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', write)
        .send({ event: 'test.job.finished', payload: { job_id: 1 } })
        .expect(500)
    ).body.id as string;

    const result = await cli('--failed');
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout);
    expect(output).toMatchObject({ processed: 1, failed: 1, skipped: 0 });
    expect(output.events).toEqual([
      expect.objectContaining({ id: learning.id, result: 'processed', attempts: 2 }),
      {
        id: job,
        event: 'test.job.finished',
        result: 'failed',
        status: 'failed',
        attempts: 2,
        last_error: 'Error: No handler is registered for the event test.job.finished.',
      },
    ]);
    expect(await row(learning.id)).toMatchObject({ status: 'processed' });
    expect(await row(job)).toMatchObject({ status: 'failed', attempts: 2 });
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
  });

  it('refuses a bad invocation with usage (exit 2) and an unknown id with exit 1', async () => {
    for (const args of [[], ['--id', 'nope']]) {
      const result = await cli(...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        /Usage: npm run cli -- webhooks:replay --id <uuid> \| --failed/,
      );
    }
    const unknown = await cli('--id', '0190a000-0000-7000-8000-000000000000');
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr.trim().split('\n').pop()!)).toEqual({
      error: 'Webhook not found.',
    });
  });
});
