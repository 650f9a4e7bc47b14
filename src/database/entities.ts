import { Customer } from '../customers/customer.entity.js';
import { CompletedAttempt } from '../learning/completed-attempt.entity.js';
import { WebhookEvent } from '../webhooks/webhook-event.entity.js';

/** Every TypeORM entity of the service; listed (not globbed) so every runner loads the same set. */
export const entities = [Customer, WebhookEvent, CompletedAttempt];
