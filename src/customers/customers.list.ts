import { defineList } from '../database/index.js';
import { Customer } from './customer.entity.js';

/**
 * GET /v2/customers: every customer by id. Counted by `customers_blocks` and
 * `customers_superblocks` (migrations CreateListPositions and AddPositionSuperblocks).
 */
export const customersList = defineList({ entity: Customer, key: 'id', order: 'ASC' });
