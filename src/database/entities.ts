import { OAuthClient } from '../auth/oauth-client.entity.js';
import { RevokedToken } from '../auth/revoked-token.entity.js';
import { SigningKey } from '../auth/signing-key.entity.js';
import { User } from '../auth/user.entity.js';
import { Customer } from '../customers/customer.entity.js';

import { CompletedAttempt } from '../learning/completed-attempt.entity.js';
import { WebhookEvent } from '../webhooks/webhook-event.entity.js';
import { WebhookSigningSecret } from '../webhooks/webhook-signing-secret.entity.js';

/** Every TypeORM entity of the service; listed (not globbed) so every runner loads the same set. */
export const entities = [
  Customer,
  OAuthClient,
  User,
  RevokedToken,
  SigningKey,
  WebhookEvent,
  CompletedAttempt,
  WebhookSigningSecret,
];
