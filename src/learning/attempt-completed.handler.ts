import { insertUnlessConflict } from '../database/insert-unless-conflict.js';
import {
  WebhookHandler,
  type WebhookContext,
  type WebhookEventHandler,
} from '../webhooks/webhook-handler.decorator.js';
import { CompletedAttempt } from './completed-attempt.entity.js';
import { AttemptCompletedPayload } from './dto/attempt-completed.payload.js';

@WebhookHandler({
  event: 'learning.attempt.completed',
  payload: AttemptCompletedPayload,
  dedupeKey: (payload) => payload.attempt_id,
  // One insert that skips a recorded attempt: independent of other deliveries' writes.
  concurrent: true,
})
export class AttemptCompletedHandler implements WebhookEventHandler<AttemptCompletedPayload> {
  async handle(
    payload: AttemptCompletedPayload,
    { manager, clientId }: WebhookContext,
  ): Promise<void> {
    // The same attempt can arrive as two different deliveries (e.g. two Idempotency-Keys);
    // it is still recorded once per sender. (A prepared insert: this runs for every event.)
    await insertUnlessConflict(manager, CompletedAttempt, {
      clientId,
      attemptId: payload.attempt_id,
      userId: payload.user_id,
      moduleId: payload.module_id,
      recordedAt: new Date(),
    });
  }
}
