import { LessThan } from 'typeorm';
import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { AttemptCompletedHandler } from '../../src/learning/attempt-completed.handler.js';
import { CompletedAttempt } from '../../src/learning/completed-attempt.entity.js';
import { WebhookEvent } from '../../src/webhooks/webhook-event.entity.js';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { authHeader } from '../support/auth.js';
import { usingPostgres } from '../support/database.js';
import { runNode } from '../support/processes.js';
import { CREATE_TEST_JOBS, FlakyEventModule } from './flaky-event.module.js';

/** `webhooks:replay` as a user runs it: the built CLI (dist/) on the test's database file. */
// Each run boots the application in a child process and some go over thousands of events: a
// minute or more on a loaded 2-core machine. Only what they do is tested, not how fast.
jest.setTimeout(240_000);

describe('CLI webhooks:replay', () => {
  let t: TestApp;
  let write: string;
  const cli = (...args: string[]) =>
    runNode(
      'dist/src/cli.js',
      ['webhooks:replay', ...args],
      { DATABASE_URL: t.database.url },
      90_000,
    );
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
    jest.spyOn(handler, 'handle').mockImplementationOnce(async () => {
      throw new Error('learning store unreachable');
    });
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
    // An event failed again: the summary is printed all the same, and the exit code says so.
    expect(result.code).toBe(1);
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
        last_error: 'No handler is registered for the event test.job.finished.',
      },
    ]);
    expect(await row(learning.id)).toMatchObject({ status: 'processed' });
    expect(await row(job)).toMatchObject({ status: 'failed', attempts: 2 });
    expect(result.stdout.trim().split('\n')).toHaveLength(1);

    // Only failures that succeed: exit 0. (The job event would fail on every replay: gone.)
    await t.db.getRepository(WebhookEvent).delete({ id: job });
    const again = await failedAttempt();
    const clean = await cli('--failed');
    expect(clean.code).toBe(0);
    expect(JSON.parse(clean.stdout)).toMatchObject({
      processed: 1,
      failed: 0,
      events: [expect.objectContaining({ id: again.id, result: 'processed' })],
    });
  });

  it('--failed goes through every batch in attempt order, ties included, each event once', async () => {
    // 230 failed events over three attempt times (ties across the batches of 100), and one
    // whose last attempt is after the replay started: not retried.
    const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000);
    const times = [at(30), at(20), at(10)];
    const rows = Array.from({ length: 230 }, (_, i) => {
      const attemptId = 900_000 + i;
      return failedRow(attemptId, times[i < 120 ? 0 : i < 180 ? 1 : 2]);
    });
    const later = failedRow(999_999, new Date(Date.now() + 3_600_000));
    await t.db.getRepository(WebhookEvent).insert([...rows, later]);

    const result = await cli('--failed');
    expect(result.code).toBe(0);
    // Events the earlier tests left failed are replayed too; these are checked among them.
    const output = JSON.parse(result.stdout) as { events: { id: string; result: string }[] };
    const ours = new Set(rows.map((r) => r.id));
    const replayed = output.events.filter((e) => ours.has(e.id));
    const expected = [...rows]
      .sort((a, b) => +a.lastAttemptAt! - +b.lastAttemptAt! || (a.id < b.id ? -1 : 1))
      .map((r) => ({ id: r.id, result: 'processed' }));
    expect(replayed.map(({ id, result }) => ({ id, result }))).toEqual(expected);
    expect(output.events.some((e) => e.id === later.id)).toBe(false);
    expect(await row(later.id)).toMatchObject({ status: 'failed', attempts: 1 });
  });

  it('--failed beside webhooks:prune skips (and counts) the events pruned under it, exit 0', async () => {
    // Failed events past their retention: the replay lists them, the prune deletes them.
    const clientId = 'replay-beside-prune';
    // Enough that the replay is still under way when the prune's first batch goes (SQLite
    // replays about ten times as fast as PostgreSQL here).
    const count = usingPostgres() ? 5_000 : 20_000;
    const seeded = await runNode(
      'dist/src/cli.js',
      ['webhooks:seed', '--count', String(count), '--client-id', clientId, '--failed-every', '1'],
      { DATABASE_URL: t.database.url },
    );
    expect(seeded.code).toBe(0);
    const events = t.db.getRepository(WebhookEvent);
    const longAgo = new Date(Date.now() - 91 * 24 * 60 * 60 * 1000);
    // Past a failed event's retention (90 days after its last attempt).
    await t.db.query(
      t.database.url.startsWith('postgres')
        ? `UPDATE webhook_events SET last_attempt_at = last_attempt_at - interval '91 days' WHERE client_id = $1`
        : `UPDATE webhook_events SET last_attempt_at = strftime('%Y-%m-%d %H:%M:%f', last_attempt_at, '-91 days') WHERE client_id = ?`,
      [clientId],
    );
    expect(await events.countBy({ clientId, status: 'failed' })).toBe(count);
    const seededIds = new Set(
      (await events.find({ select: { id: true }, where: { clientId } })).map((e) => e.id),
    );
    expect((await events.findOneByOrFail({ clientId })).lastAttemptAt!.getTime()).toBeLessThan(
      longAgo.getTime() + 60_000,
    );

    // Every failed event last attempted before now, ours and those the tests above left: what
    // the replay starts from (one left with a later attempt time is not its to take).
    const failedAtStart = await events.countBy({
      status: 'failed',
      lastAttemptAt: LessThan(new Date()),
    });
    const replay = runNode(
      'dist/src/cli.js',
      ['webhooks:replay', '--failed'],
      { DATABASE_URL: t.database.url },
      150_000,
    );
    // The prune starts once the replay is under way (its first events processed).
    for (let i = 0; (await events.countBy({ clientId, status: 'processed' })) === 0; i++) {
      if (i > 600) throw new Error('the replay processed nothing in 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    const prune = runNode(
      'dist/src/cli.js',
      ['webhooks:prune'],
      { DATABASE_URL: t.database.url },
      150_000,
    );
    const [replayed, pruned] = await Promise.all([replay, prune]);

    expect(pruned.code).toBe(0);
    expect(replayed.stderr).not.toMatch(/WebhookEvent|matching|Could not find/);
    expect(replayed.code).toBe(0);
    const summary = JSON.parse(replayed.stdout) as {
      processed: number;
      failed: number;
      skipped: number;
      events: { id: string; result: string; status: string }[];
    };
    const deleted = JSON.parse(pruned.stdout) as { deleted: number };
    // Every seeded event the replay took either ran again (and stays) or was pruned under it
    // (skipped); those pruned before the replay reached their batch are not listed, but counted
    // as skipped. Failed events left by the tests above are replayed too (and some fail again).
    const ours = summary.events.filter((e) => seededIds.has(e.id));
    const skipped = ours.filter((e) => e.result === 'skipped');
    const processed = ours.filter((e) => e.result === 'processed');
    expect(skipped.length).toBeGreaterThan(0);
    expect(skipped.length + processed.length).toBe(ours.length);
    expect(skipped).toEqual(
      skipped.map(({ id }) => ({ id, result: 'skipped', status: 'deleted' })),
    );
    // Each event failed at the start is in one of the three counts, listed or not.
    expect(summary.processed + summary.failed + summary.skipped).toBe(failedAtStart);
    expect(summary.skipped).toBeGreaterThanOrEqual(
      summary.events.filter((e) => e.result === 'skipped').length,
    );
    expect(await events.countBy({ clientId, status: 'processed' })).toBe(processed.length);
    expect(await events.countBy({ clientId })).toBe(processed.length);
    expect(deleted.deleted).toBeGreaterThanOrEqual(count - processed.length);
  }, 180_000);

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

/** A stored failed learning.attempt.completed event, as a delivery that failed would leave it. */
function failedRow(attemptId: number, lastAttemptAt: Date): WebhookEvent {
  return {
    id: randomUUID(),
    clientId: 'replay-test',
    event: 'learning.attempt.completed',
    dedupeKey: `natural:${attemptId}`,
    payload: JSON.stringify({ user_id: 7, module_id: 3, attempt_id: attemptId }),
    status: 'failed',
    attempts: 1,
    lastError: 'Error: learning store unreachable',
    receivedAt: lastAttemptAt,
    processedAt: null,
    lastAttemptAt,
  };
}
