import { describe, expect, it } from '@jest/globals';
import { blockEnd, blockStart, locate, POSITION_BLOCK_SIZE } from './positions.js';

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
