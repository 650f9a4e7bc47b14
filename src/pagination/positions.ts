/** Position counts' block sizes, for the tests that place rows in chosen blocks (paged-list.ts). */
export { BLOCKS_PER_SUPERBLOCK, POSITION_BLOCK_SIZE } from '../database/paged-list.js';
