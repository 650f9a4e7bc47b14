import request from 'supertest';
import { CompletedAttempt } from '../../src/learning/completed-attempt.entity.js';
import { WebhookEvent } from '../../src/webhooks/webhook-event.entity.js';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';

describe('webhook deliveries with duplicates, all at once', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('500 concurrent deliveries of 100 distinct events have exactly 100 effects', async () => {
    const auth = await authHeader(t, ['webhooks:write']);
    const deliveries = Array.from({ length: 500 }, (_, i) => 1000 + (i % 100));
    const answers = await Promise.all(
      deliveries.map((attemptId) =>
        request(t.http)
          .post('/v2/webhooks')
          .set('authorization', auth)
          .send({
            event: 'learning.attempt.completed',
            payload: { user_id: 7, module_id: 3, attempt_id: attemptId },
          }),
      ),
    );
    expect(answers.map((res) => res.status)).toEqual(deliveries.map(() => 200));

    // Every delivery of one event answers with the same id: the first delivery's.
    const idOf = new Map<number, string>();
    for (const [i, res] of answers.entries()) {
      const first = idOf.get(deliveries[i]);
      if (first) expect(res.body.data.id).toBe(first);
      else idOf.set(deliveries[i], res.body.data.id);
    }
    expect(new Set(idOf.values()).size).toBe(100);
    expect(await t.db.getRepository(WebhookEvent).count()).toBe(100);
    expect(await t.db.getRepository(CompletedAttempt).count()).toBe(100);
    expect(await t.db.getRepository(WebhookEvent).countBy({ status: 'processed' })).toBe(100);
  });
});
