import { randomFillSync } from 'node:crypto';

const bytes = Buffer.alloc(16);
// Random bytes drawn in bulk: one getrandom() per id costs more than the rest of uuidv7().
const pool = Buffer.alloc(8 * 512);
let poolOffset = pool.length;
let lastMs = 0;
let counter = 0;

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then a 12-bit counter, then random bits. Ids
 * sort by creation time (monotonic within this process), so the primary key doubles as the
 * "newest first" order and new rows land at the end of the index.
 */
export function uuidv7(now: number = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    counter = 0;
  } else if (++counter > 0xfff) {
    // 4096 ids in one millisecond: borrow the next one rather than repeat or go backwards.
    lastMs += 1;
    counter = 0;
  }
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  pool.copy(bytes, 8, poolOffset, (poolOffset += 8));
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Any RFC 9562 UUID, lower or upper case. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
