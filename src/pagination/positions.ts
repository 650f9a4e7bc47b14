import type { Database } from '../database/database.js';
import type { Row, Statement, Work } from '../database/statement.js';
import type { PageRequest } from './page-query.dto.js';

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
    /**
     * The block holding the page's last row: the page's rows lie between the two, so its query
     * is bounded on both sides (no plan can wander past them).
     */
    lastBlock: number;
  };
}

/**
 * Locates the page of `limit` rows at position `offset` (0-based) in a list whose blocks are
 * given in list order (ascending blocks for an ascending list, descending for a descending one).
 */
export function locate(blocks: BlockCount[], offset: number, limit = 1): PageStart {
  let before = 0;
  let start: PageStart['start'];
  for (const { block, rows } of blocks) {
    if (start === undefined && offset < before + rows) {
      start = { block, skip: offset - before, lastBlock: block };
    }
    if (start !== undefined && rows > 0 && before < offset + limit) start.lastBlock = block;
    before += rows;
  }
  return { total: before, start };
}

/**
 * The statement that places a page, so that only one or two rows come back whatever the list's
 * length: `counts` is a `SELECT block, rows …` giving each block's matching rows (one row per
 * block); the database sums them in list order (`order` of the blocks) and returns the blocks
 * the page at :pageStart (its offset) up to :pageEnd overlaps, each with the matching rows before
 * it and the list's total, and the first block for the total alone. Read it with place().
 */
export function placingSql(counts: string, order: 'ASC' | 'DESC'): string {
  return `SELECT block, rows, before, total FROM (
      SELECT block, rows,
        SUM(rows) OVER (ORDER BY block ${order} ROWS UNBOUNDED PRECEDING) - rows AS before,
        SUM(rows) OVER () AS total,
        ROW_NUMBER() OVER (ORDER BY block ${order}) AS n
      FROM (${counts}) counts
    ) placed
    WHERE n = 1 OR (rows > 0 AND before < :pageEnd AND before + rows > :pageStart)
    ORDER BY block ${order}`;
}

/**
 * The statement that gives what a page needs to be placed, for `db`'s dialect: `counts` is a
 * `SELECT block, rows …` (one row per block) with `parameters`. Read its rows with
 * placePage(). PostgreSQL sums in the database (placingSql(): a row per block would cost more to
 * send and parse than the sum); SQLite, in the same process, sends every block's count as one
 * string, which measured 4× cheaper than its window functions (BENCHMARKS.md).
 */
export function placingStatement(
  db: Database,
  counts: string,
  order: 'ASC' | 'DESC',
  parameters: Record<string, unknown>,
  request: PageRequest,
): Statement {
  if (db.dialect === 'postgres') {
    return db.sql(placingSql(counts, order), { ...parameters, ...placing(request) });
  }
  return db.sql(
    `SELECT group_concat(block || ':' || rows, ',' ORDER BY block ${order}) AS blocks
     FROM (${counts}) counts`,
    parameters,
  );
}

/** Where the page lies, from the rows of placingStatement(). */
export function placePage(db: Database, rows: Row[], request: PageRequest): PageStart {
  if (db.dialect === 'postgres') return place(rows, request.offset, request.limit);
  const text = rows[0]?.blocks;
  const blocks: BlockCount[] = [];
  if (typeof text === 'string' && text !== '') {
    for (const pair of text.split(',')) {
      const colon = pair.indexOf(':');
      blocks.push({ block: Number(pair.slice(0, colon)), rows: Number(pair.slice(colon + 1)) });
    }
  }
  return locate(blocks, request.offset, request.limit);
}

/** The parameters of placingSql() for a page. */
export function placing(request: PageRequest): { pageStart: number; pageEnd: number } {
  return { pageStart: request.offset, pageEnd: request.offset + request.limit };
}

/** locate() on the rows of placingSql(): the same answer from the one or two blocks it returns. */
export function place(rows: Row[], offset: number, limit: number): PageStart {
  if (rows.length === 0) return { total: 0, start: undefined };
  let start: PageStart['start'];
  for (const row of rows) {
    const block = Number(row.block);
    const count = Number(row.rows);
    const before = Number(row.before);
    if (count === 0 || before >= offset + limit || before + count <= offset) continue;
    if (start === undefined) start = { block, skip: offset - before, lastBlock: block };
    else start.lastBlock = block;
  }
  return { total: Number(rows[0].total), start };
}

/** The first key of `block`: an ascending list reads from here on. */
export const blockStart = (block: number) => block * POSITION_BLOCK_SIZE;

/** The first key after `block`: a descending list reads the keys below it. */
export const blockEnd = (block: number) => (block + 1) * POSITION_BLOCK_SIZE;

/**
 * One page of a list kept by createPositionBlocks() (database/position-blocks.ts), ascending by
 * its key: the block counts and the page's rows in one snapshot. `select` is the statement's
 * `SELECT … FROM <table>` part.
 */
export function pageByBlocks(
  db: Database,
  table: string,
  select: string,
  request: PageRequest,
  key = 'id',
): Promise<{ rows: Row[]; total: number }> {
  return db.read(function* (): Work<{ rows: Row[]; total: number }> {
    const placed = yield placingStatement(
      db,
      `SELECT block, rows FROM ${table}_blocks`,
      'ASC',
      {},
      request,
    );
    const { total, start } = placePage(db, placed.rows, request);
    if (!start) return { rows: [], total };
    const page = yield db.sql(
      `${select} WHERE ${key} >= :from AND ${key} < :until ORDER BY ${key} LIMIT :limit OFFSET :skip`,
      {
        from: blockStart(start.block),
        until: blockEnd(start.lastBlock),
        limit: request.limit,
        skip: start.skip,
      },
    );
    return { rows: page.rows, total };
  });
}

/** The exact row count of a list kept by createPositionBlocks(). */
export async function countByBlocks(db: Database, table: string): Promise<number> {
  const [row] = await db.select(db.sql(`SELECT SUM(rows) AS total FROM ${table}_blocks`));
  return Number(row?.total ?? 0);
}
