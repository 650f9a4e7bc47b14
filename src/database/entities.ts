import { Customer } from '../customers/customer.entity.js';
import { Counter } from '../pagination/counter.entity.js';

/** Every TypeORM entity of the service; listed (not globbed) so every runner loads the same set. */
export const entities = [Customer, Counter];
