import { type RowInsert, rowInsert } from '../database/insert-with-dependents.js';
import {
  WebhookHandler,
  type WebhookEventInfo,
  type WebhookRowsHandler,
} from '../webhooks/webhook-handler.decorator.js';
import { CompletedAttempt } from './completed-attempt.entity.js';
import { AttemptCompletedPayload } from './dto/attempt-completed.payload.js';

@WebhookHandler({
  event: 'learning.attempt.completed',
  payload: AttemptCompletedPayload,
  dedupeKey: (payload) => payload.attempt_id,
})
export class AttemptCompletedHandler implements WebhookRowsHandler<AttemptCompletedPayload> {
  /**
   * One row per attempt and sender. The same attempt can arrive as two different deliveries (e.g.
   * two Idempotency-Keys); the second row collides with the first and is skipped.
   */
  rows(payload: AttemptCompletedPayload, { clientId }: WebhookEventInfo): RowInsert[] {
    return [
      rowInsert(CompletedAttempt, {
        clientId,
        attemptId: payload.attempt_id,
        userId: payload.user_id,
        moduleId: payload.module_id,
        recordedAt: new Date(),
      }),
    ];
  }
}
