/**
 * Any page at about the cost of the first (the list rule of README "Paged lists").
 *
 * A list's rows are grouped in blocks of POSITION_BLOCK_SIZE consecutive keys (customer ids,
 * webhook events' insertion numbers), and the database keeps how many rows of each block match
 * each filter value (triggers of the CreateListPositions migration, in the same transaction as
 * the rows). Summing those few hundred or thousand counts gives the exact total for any filter
 * and the block where position k lies; the page is then read with an OFFSET inside that block
 * only (at most one block's rows skipped) instead of an OFFSET over every row before it.
 */
export const POSITION_BLOCK_SIZE = 4096;

export interface BlockCount {
  block: number;
  rows: number;
}

export interface PageStart {
  /** Rows matching the filter in the whole list. */
  total: number;
  /** Where the page begins, or undefined when `offset` lies past the end. */
  start?: {
    /** The block holding the page's first row. */
    block: number;
    /** Matching rows of that block that come before the page's first row, in list order. */
    skip: number;
  };
}

/**
 * Locates position `offset` (0-based) in a list whose blocks are given in list order (ascending
 * blocks for an ascending list, descending for a descending one).
 */
export function locate(blocks: BlockCount[], offset: number): PageStart {
  let before = 0;
  let start: PageStart['start'];
  for (const { block, rows } of blocks) {
    if (start === undefined && offset < before + rows) start = { block, skip: offset - before };
    before += rows;
  }
  return { total: before, start };
}

/** Block counts as the databases return them (bigint sums come back as strings on PostgreSQL). */
export function toBlockCounts(rows: Record<string, unknown>[]): BlockCount[] {
  return rows.map((row) => ({ block: Number(row.block), rows: Number(row.rows) }));
}

/** The first key of `block`: an ascending list reads from here on. */
export const blockStart = (block: number) => block * POSITION_BLOCK_SIZE;

/** The first key after `block`: a descending list reads the keys below it. */
export const blockEnd = (block: number) => (block + 1) * POSITION_BLOCK_SIZE;
