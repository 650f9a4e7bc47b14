import { CreateCustomers1763800000000 } from './migrations/1763800000000-CreateCustomers.js';
import { CreateCounters1763800002000 } from './migrations/1763800002000-CreateCounters.js';

/** Every migration, in order; listed (not globbed) so the app, the CLI and jest agree. */
export const migrations = [CreateCustomers1763800000000, CreateCounters1763800002000];
