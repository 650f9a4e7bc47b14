import { CreateCustomers1763800000000 } from './migrations/1763800000000-CreateCustomers.js';
import { CreateWebhookEvents1763800003000 } from './migrations/1763800003000-CreateWebhookEvents.js';
import { CreateCompletedAttempts1763800003010 } from './migrations/1763800003010-CreateCompletedAttempts.js';

/** Every migration, in order; listed (not globbed) so the app, the CLI and jest agree. */
export const migrations = [
  CreateCustomers1763800000000,
  CreateWebhookEvents1763800003000,
  CreateCompletedAttempts1763800003010,
];
