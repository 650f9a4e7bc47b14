import type { Database } from '../database/database.js';
import type { Row, StatementResult, Work } from '../database/statement.js';
import type { PageRequest } from './page-query.dto.js';

/**
 * Any page at about the cost of the first (the list rule of docs/contract.md; how, in
 * docs/architecture.md).
 *
 * A list's rows are grouped in blocks of POSITION_BLOCK_SIZE consecutive keys (customer ids,
 * webhook events' insertion numbers), and blocks in superblocks of BLOCKS_PER_SUPERBLOCK; the
 * database keeps how many rows of each block and of each superblock match each filter value
 * (triggers of the list's migrations, in the same transaction as the rows). A page is placed in
 * two short sums: over the superblocks (the exact total, and the superblock where position k
 * lies: about 40 rows at 10M keys) and over that superblock's blocks (at most 64 rows); it is then
 * read with an OFFSET inside one block only, instead of an OFFSET over every row before it.
 * Neither sum grows with the list the way one sum over every block did (2,441 blocks at 10M).
 */
export const POSITION_BLOCK_SIZE = 4096;

/** Blocks per superblock (262,144 keys): the first level a page is placed in. */
export const BLOCKS_PER_SUPERBLOCK = 64;

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

/** A list kept by position counts: what pageReader() needs to place and read its pages. */
export interface PositionedList {
  /** The table, and the condition its rows must meet (`TRUE` for every row). */
  table: string;
  where: string;
  /** The page's select list. */
  columns: string;
  /** The integer key the list is ordered by, and its order. */
  key: string;
  order: 'ASC' | 'DESC';
  /** `SELECT block, rows …` per superblock, its number as `block`; rows of a block are summed. */
  superblocks: string;
  /** `SELECT block, rows …` per block, for the blocks whose `block ${range}` holds. */
  blocks: (range: string) => string;
}

/** One page's rows and the list's exact total, read in one snapshot. */
export type PageReader = (
  request: PageRequest,
  parameters?: Record<string, unknown>,
) => Promise<{ rows: Row[]; total: number }>;

/**
 * Reads pages of `list` with `parameters` (its filters). The statements are built here, once: call
 * it when the repository is made, and the returned reader per page.
 *
 * PostgreSQL: one statement (pagedSql()), so the snapshot needs no transaction and the page costs
 * one round trip instead of five (BEGIN, two sums, the page, COMMIT; each a socket write that
 * cost the service about 150 µs of CPU at 10M events, docs/benchmarks.md). SQLite, in the process:
 * the two sums are read in a read transaction and placed by locate().
 */
export function pageReader(db: Database, list: PositionedList): PageReader {
  if (db.dialect === 'postgres') {
    const paged = pagedSql(db, list);
    return async (request, parameters = {}) => {
      const rows = await db.select(
        db.sql(paged, {
          ...parameters,
          pageStart: request.offset,
          pageEnd: request.offset + request.limit,
          limit: request.limit,
        }),
      );
      return {
        rows: rows.filter((row) => row.page_key !== null),
        total: Number(rows[0]?.list_total ?? 0),
      };
    };
  }
  const placing = placingStatements(list);
  const pageText = pageSql(db, list, ':from', ':until', ':skip');
  return (request, parameters = {}) =>
    db.read(function* (): Work<{ rows: Row[]; total: number }> {
      const { total, start } = yield* placePage(db, placing, parameters, request);
      if (!start) return { rows: [], total };
      const page = yield db.sql(pageText, {
        ...parameters,
        from: blockStart(Math.min(start.block, start.lastBlock)),
        until: blockEnd(Math.max(start.block, start.lastBlock)),
        skip: start.skip,
        limit: request.limit,
      });
      return { rows: page.rows, total };
    });
}

/** The two sums placePage() reads: superblocks, then the blocks from :fromBlock to :toBlock. */
export interface PlacingStatements {
  superblocks: string;
  blocks: string;
}

function placingStatements(list: PositionedList): PlacingStatements {
  const summed = (counted: string) =>
    `SELECT block, SUM(rows) AS rows FROM (${counted}) counted
     GROUP BY block ORDER BY block ${list.order}`;
  return {
    superblocks: summed(list.superblocks),
    blocks: summed(list.blocks('BETWEEN :fromBlock AND :toBlock')),
  };
}

/**
 * Places a page in two sums (see above), each returning at most a few dozen rows whatever the
 * list's length; run inside the read that then reads the page, for one snapshot.
 */
export function* placePage(
  db: Database,
  placing: PlacingStatements,
  parameters: Record<string, unknown>,
  request: PageRequest,
): Work<PageStart> {
  const superblocks = yield db.sql(placing.superblocks, parameters);
  const outer = locate(blockCounts(superblocks), request.offset, request.limit);
  if (!outer.start) return outer;
  const { block, lastBlock } = outer.start;
  const blocks = yield db.sql(placing.blocks, {
    ...parameters,
    fromBlock: Math.min(block, lastBlock) * BLOCKS_PER_SUPERBLOCK,
    toBlock: (Math.max(block, lastBlock) + 1) * BLOCKS_PER_SUPERBLOCK - 1,
  });
  // Both levels are kept in the same transactions: the position found in the superblocks lies
  // in their blocks.
  const inner = locate(blockCounts(blocks), outer.start.skip, request.limit);
  return { total: outer.total, start: inner.start };
}

function blockCounts({ rows }: StatementResult): BlockCount[] {
  return rows.map((row: Row) => ({ block: Number(row.block), rows: Number(row.rows) }));
}

/**
 * The page's rows, keys from `from` up to `until` (SQL expressions: the blocks of its first and
 * last rows), `skip` matching rows into them. PostgreSQL forms every row an OFFSET skips, so there
 * the first key is found by an OFFSET over keys only in a subquery (10.8 → 1.6 ms for 2,000 rows
 * skipped at 10M events) and the page read from it; SQLite checks the OFFSET before reading a
 * row's columns, so a plain OFFSET there walks the index once instead of twice.
 */
function pageSql(
  db: Database,
  list: PositionedList,
  from: string,
  until: string,
  skip: string,
): string {
  const { table, where, key, order } = list;
  const inBlocks = `${key} >= ${from} AND ${key} < ${until}`;
  const select = `SELECT ${key} AS page_key, ${list.columns} FROM ${table} WHERE ${where} AND ${inBlocks}`;
  if (db.dialect !== 'postgres') {
    return `${select} ORDER BY ${key} ${order} LIMIT :limit OFFSET ${skip}`;
  }
  return `${select} AND ${key} ${order === 'ASC' ? '>=' : '<='} (
      SELECT ${key} FROM ${table} WHERE ${where} AND ${inBlocks}
      ORDER BY ${key} ${order} LIMIT 1 OFFSET ${skip})
    ORDER BY ${key} ${order} LIMIT :limit`;
}

/**
 * The page as one PostgreSQL statement: window functions place the page over the superblocks,
 * then over the blocks of the one or two superblocks it overlaps, and the page is read from the
 * block where it starts (pageSql()). Every row carries the list's total; an empty page is one row
 * with the total and null columns.
 */
function pagedSql(db: Database, list: PositionedList): string {
  const order = list.order;
  const placed = (counts: string, before: string) => `
    SELECT block, rows, ${before} + SUM(rows) OVER (ORDER BY block ${order}
      ROWS UNBOUNDED PRECEDING) - rows AS before, SUM(rows) OVER () AS total
    FROM (SELECT block, SUM(rows) AS rows FROM (${counts}) counted GROUP BY block) summed`;
  const overlapping = 'rows > 0 AND before < :pageEnd AND before + rows > :pageStart';
  const per = BLOCKS_PER_SUPERBLOCK;
  const size = POSITION_BLOCK_SIZE;
  return `WITH superblocks AS (${placed(list.superblocks, '0')}),
    chosen AS (
      SELECT MIN(block) AS low, MAX(block) AS high, MIN(before) AS before
      FROM superblocks WHERE ${overlapping}),
    blocks AS (${placed(
      list.blocks(
        `BETWEEN (SELECT low * ${per} FROM chosen) AND (SELECT high * ${per} + ${per - 1} FROM chosen)`,
      ),
      '(SELECT before FROM chosen)',
    )}),
    span AS (
      SELECT MIN(block) * ${size} AS from_key, (MAX(block) + 1) * ${size} AS until_key,
        :pageStart - MIN(before) AS skip
      FROM blocks WHERE ${overlapping})
    SELECT counted.list_total, page.*
    FROM (SELECT MAX(total) AS list_total FROM superblocks) counted
    LEFT JOIN (${pageSql(
      db,
      list,
      '(SELECT from_key FROM span)',
      '(SELECT until_key FROM span)',
      '(SELECT skip FROM span)',
    )}) page
    ON TRUE`;
}

/** The first key of `block`: an ascending list reads from here on. */
export const blockStart = (block: number) => block * POSITION_BLOCK_SIZE;

/** The first key after `block`: a descending list reads the keys below it. */
export const blockEnd = (block: number) => (block + 1) * POSITION_BLOCK_SIZE;

/**
 * The list of a table kept by createListPositions() (database/position-blocks.ts), every row,
 * ascending by `key`.
 */
export function wholeTable(table: string, columns: string, key = 'id'): PositionedList {
  return {
    table,
    where: 'TRUE',
    columns,
    key,
    order: 'ASC',
    superblocks: `SELECT superblock AS block, rows FROM ${table}_superblocks`,
    blocks: (range) => `SELECT block, rows FROM ${table}_blocks WHERE block ${range}`,
  };
}

/** The exact row count of a table kept by createListPositions(). */
export async function countByBlocks(db: Database, table: string): Promise<number> {
  const [row] = await db.select(db.sql(`SELECT SUM(rows) AS total FROM ${table}_superblocks`));
  return Number(row?.total ?? 0);
}
