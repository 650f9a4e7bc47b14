import { CountCustomersByTrigger1763800004000 } from './migrations/1763800004000-CountCustomersByTrigger.js';
import { CreateCustomers1763800000000 } from './migrations/1763800000000-CreateCustomers.js';
import { CreateCounters1763800002000 } from './migrations/1763800002000-CreateCounters.js';
import { CreateOAuthClients1763800001000 } from './migrations/1763800001000-CreateOAuthClients.js';
import { CreateOAuthUsers1763800001001 } from './migrations/1763800001001-CreateOAuthUsers.js';
import { CreateOAuthRevokedTokens1763800001002 } from './migrations/1763800001002-CreateOAuthRevokedTokens.js';
import { CreateOAuthSigningKeys1763800001003 } from './migrations/1763800001003-CreateOAuthSigningKeys.js';
import { AddOAuthSigningKeyRetiredAt1763800001100 } from './migrations/1763800001100-AddOAuthSigningKeyRetiredAt.js';
import { CreateWebhookEvents1763800003000 } from './migrations/1763800003000-CreateWebhookEvents.js';
import { CreateCompletedAttempts1763800003010 } from './migrations/1763800003010-CreateCompletedAttempts.js';
import { WebhookSenders1763800004500 } from './migrations/1763800004500-WebhookSenders.js';
import { CreateListPositions1763800006000 } from './migrations/1763800006000-CreateListPositions.js';
import { AddPositionSuperblocks1763800007000 } from './migrations/1763800007000-AddPositionSuperblocks.js';
import { MergeWebhookStatusIndexes1763800008000 } from './migrations/1763800008000-MergeWebhookStatusIndexes.js';
import { DropCounters1763800012500 } from './migrations/1763800012500-DropCounters.js';
import { CreateWebhookSigningSecrets1763800010000 } from './migrations/1763800010000-CreateWebhookSigningSecrets.js';
import { CountTruncates1763800013000 } from './migrations/1763800013000-CountTruncates.js';
import { NormalizeUsernames1763800014000 } from './migrations/1763800014000-NormalizeUsernames.js';

/** Every migration, in order; listed (not globbed) so the app, the CLI and jest agree. */
export const migrations = [
  CreateCustomers1763800000000,
  CreateOAuthClients1763800001000,
  CreateOAuthUsers1763800001001,
  CreateOAuthRevokedTokens1763800001002,
  CreateOAuthSigningKeys1763800001003,
  AddOAuthSigningKeyRetiredAt1763800001100,
  CreateCounters1763800002000,
  CreateWebhookEvents1763800003000,
  CreateCompletedAttempts1763800003010,
  CountCustomersByTrigger1763800004000,
  WebhookSenders1763800004500,
  CreateListPositions1763800006000,
  AddPositionSuperblocks1763800007000,
  MergeWebhookStatusIndexes1763800008000,
  CreateWebhookSigningSecrets1763800010000,
  DropCounters1763800012500,
  CountTruncates1763800013000,
  NormalizeUsernames1763800014000,
];
