import { describe, expect, it } from '@jest/globals';
import type { Database } from './database.js';
import type { PageRequest } from '../pagination/page-query.dto.js';
import {
  BLOCKS_PER_SUPERBLOCK,
  blockEnd,
  blockStart,
  locate,
  placePage,
  POSITION_BLOCK_SIZE,
  type BlockCount,
} from './paged-list.js';

describe('locate', () => {
  const blocks = [
    { block: 0, rows: 3 },
    { block: 1, rows: 0 },
    { block: 2, rows: 5 },
    { block: 7, rows: 1 },
  ];

  it('sums the blocks into the total', () => {
    expect(locate(blocks, 0).total).toBe(9);
    expect(locate([], 0)).toEqual({ total: 0, start: undefined });
  });

  it('finds the block of each position and the matching rows before it there', () => {
    const starts = Array.from({ length: 9 }, (_, offset) => locate(blocks, offset).start);
    expect(starts).toEqual([
      { block: 0, skip: 0, lastBlock: 0 },
      { block: 0, skip: 1, lastBlock: 0 },
      { block: 0, skip: 2, lastBlock: 0 },
      { block: 2, skip: 0, lastBlock: 2 },
      { block: 2, skip: 1, lastBlock: 2 },
      { block: 2, skip: 2, lastBlock: 2 },
      { block: 2, skip: 3, lastBlock: 2 },
      { block: 2, skip: 4, lastBlock: 2 },
      { block: 7, skip: 0, lastBlock: 7 },
    ]);
  });

  it("names the block of the page's last row, skipping empty blocks", () => {
    expect(locate(blocks, 1, 2).start).toEqual({ block: 0, skip: 1, lastBlock: 0 });
    expect(locate(blocks, 2, 2).start).toEqual({ block: 0, skip: 2, lastBlock: 2 });
    expect(locate(blocks, 4, 20).start).toEqual({ block: 2, skip: 1, lastBlock: 7 });
  });

  it('has no start past the end', () => {
    expect(locate(blocks, 9)).toEqual({ total: 9, start: undefined });
  });

  it('gives key bounds per block', () => {
    expect(blockStart(2)).toBe(2 * POSITION_BLOCK_SIZE);
    expect(blockEnd(2)).toBe(3 * POSITION_BLOCK_SIZE);
  });
});

/**
 * Drives placePage() over `blocks` (in list order) the way a database would answer its two
 * statements: superblock sums first, then the sums of the blocks in the range it asks for.
 */
function placeOver(blocks: BlockCount[], offset: number, limit: number) {
  const db = { sql: (sql: string, params: Record<string, unknown>) => ({ sql, params }) };
  const sums = (rows: BlockCount[]) => {
    const byBlock = new Map<number, number>();
    for (const { block, rows: n } of rows) byBlock.set(block, (byBlock.get(block) ?? 0) + n);
    return [...byBlock].map(([block, n]) => ({ block, rows: String(n) }));
  };
  const work = placePage(db as unknown as Database, { superblocks: 'S', blocks: 'B' }, {}, {
    offset,
    limit,
  } as PageRequest);
  let step = work.next();
  while (!step.done) {
    const statement = step.value as unknown as { sql: string; params: Record<string, number> };
    const rows =
      statement.sql === 'S'
        ? sums(blocks.map(({ block, rows: n }) => ({ block: Math.floor(block / SUPER), rows: n })))
        : sums(
            blocks.filter(
              ({ block }) =>
                block >= statement.params.fromBlock && block <= statement.params.toBlock,
            ),
          );
    step = work.next({ rows, affected: 0 });
  }
  return step.value;
}

const SUPER = BLOCKS_PER_SUPERBLOCK;

describe('placePage', () => {
  it('gives what locate() gives over every block, from superblock sums and one range of blocks', () => {
    for (let seed = 1; seed <= 200; seed++) {
      let state = seed;
      const random = (n: number) => (state = (state * 48271) % 2147483647) % n;
      // Blocks spread over a few superblocks, some empty, with long gaps.
      const ascending: BlockCount[] = [];
      for (let block = 0; ascending.length < 1 + random(12); block += 1 + random(SUPER)) {
        ascending.push({ block, rows: random(4) === 0 ? 0 : random(7) });
      }
      const total = ascending.reduce((sum, { rows }) => sum + rows, 0);
      for (const order of ['ASC', 'DESC'] as const) {
        const blocks = order === 'ASC' ? ascending : [...ascending].reverse();
        for (let offset = 0; offset <= total + 1; offset++) {
          for (const limit of [1, 2, 5]) {
            expect(placeOver(blocks, offset, limit)).toEqual(locate(blocks, offset, limit));
          }
        }
      }
    }
    expect(placeOver([], 0, 20)).toEqual({ total: 0, start: undefined });
  });
});
