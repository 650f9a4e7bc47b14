import {
  type WebhookContext,
  type WebhookEventHandler,
  WebhookHandler,
} from '../webhooks/webhook-handler.decorator.js';
import { CompletedAttempt } from './completed-attempt.entity.js';
import { AttemptCompletedPayload } from './dto/attempt-completed.payload.js';

@WebhookHandler({
  event: 'learning.attempt.completed',
  payload: AttemptCompletedPayload,
  dedupeKey: (payload) => payload.attempt_id,
})
export class AttemptCompletedHandler implements WebhookEventHandler<AttemptCompletedPayload> {
  /**
   * One row per attempt and sender. The same attempt can arrive as two different deliveries (e.g.
   * two Idempotency-Keys): the second row collides with the first and is skipped.
   */
  async handle(payload: AttemptCompletedPayload, { manager, clientId }: WebhookContext) {
    await manager
      .createQueryBuilder()
      .insert()
      .into(CompletedAttempt)
      .values({
        clientId,
        attemptId: payload.attempt_id,
        userId: payload.user_id,
        moduleId: payload.module_id,
        recordedAt: new Date(),
      })
      .orIgnore()
      .updateEntity(false)
      .execute();
  }
}
