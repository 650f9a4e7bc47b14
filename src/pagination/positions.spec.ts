import { describe, expect, it } from '@jest/globals';
import {
  blockEnd,
  blockStart,
  locate,
  place,
  POSITION_BLOCK_SIZE,
  type BlockCount,
} from './positions.js';

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

/** What placingSql() returns for `blocks` (given in list order), computed here row by row. */
function placedRows(blocks: BlockCount[], offset: number, limit: number) {
  const total = blocks.reduce((sum, { rows }) => sum + rows, 0);
  let before = 0;
  return blocks.flatMap(({ block, rows }, i) => {
    const row = { block, rows, before, total: String(total) };
    before += rows;
    const overlaps = rows > 0 && row.before < offset + limit && row.before + rows > offset;
    return i === 0 || overlaps ? [row] : [];
  });
}

describe('place', () => {
  it('gives what locate() gives over every block, from the rows the database returns', () => {
    for (let seed = 1; seed <= 200; seed++) {
      let state = seed;
      const random = (n: number) => (state = (state * 48271) % 2147483647) % n;
      const blocks = Array.from({ length: 1 + random(12) }, (_, block) => ({
        block,
        rows: random(4) === 0 ? 0 : random(7),
      }));
      const total = blocks.reduce((sum, { rows }) => sum + rows, 0);
      for (let offset = 0; offset <= total + 1; offset++) {
        for (const limit of [1, 2, 5]) {
          expect(place(placedRows(blocks, offset, limit), offset, limit)).toEqual(
            locate(blocks, offset, limit),
          );
        }
      }
    }
    expect(place([], 0, 20)).toEqual({ total: 0, start: undefined });
  });
});
