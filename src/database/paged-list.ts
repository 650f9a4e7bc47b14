import type { EntityMetadata, ObjectLiteral } from 'typeorm';
import { Page } from '../pagination/page.js';
import type { PageRequest } from '../pagination/page-query.dto.js';
import type { Database } from './database.js';
import type { Row, StatementResult, Work } from './statement.js';

/**
 * Paged lists declared once: any page at about the cost of the first, with an exact total (the
 * list rule of docs/contract.md; how, in docs/architecture.md).
 *
 * A list's rows are grouped in blocks of POSITION_BLOCK_SIZE consecutive keys, and blocks in
 * superblocks of BLOCKS_PER_SUPERBLOCK; the database keeps how many rows of each block and
 * superblock have each value of the counted columns (scope and filters), by triggers made from
 * the list's migration (frozen/list-counts-v1.ts), in the same transaction as the rows. A page is
 * placed in two short sums: over the superblocks (the exact total, and the superblock where
 * position k lies) and over that superblock's blocks (at most 64 rows); it is then read with an
 * OFFSET inside one block only, instead of an OFFSET over every row before it.
 */
export const POSITION_BLOCK_SIZE = 4096;

/** Blocks per superblock (262,144 keys): the first level a page is placed in. */
export const BLOCKS_PER_SUPERBLOCK = 64;

/** A paged list: what its migration counts and what its repository pages by. */
interface ListDeclaration<T extends ObjectLiteral> {
  entity: new () => T;
  /** The integer property the list is ordered by, and the order. */
  key: keyof T & string;
  order: 'ASC' | 'DESC';
  /** The property that scopes rows to a caller (e.g. the client id), if any. */
  scope?: keyof T & string;
  /** The properties a caller may filter by (equality). */
  filters?: (keyof T & string)[];
  /** The counting tables' prefix, when it is not the table's name (as in the migration). */
  counts?: string;
  /** PostgreSQL: writers append count changes, folded in the background (as in the migration). */
  appendChanges?: boolean;
  /** Properties a page leaves out: large columns that its repository reads afterwards, if at all. */
  omit?: (keyof T & string)[];
}

/** A declared list: its declaration and the token its PagedList is injected by (@InjectList). */
interface PagedListDeclaration<T extends ObjectLiteral> extends ListDeclaration<T> {
  readonly token: symbol;
}

/** Any declared list, whatever its entity (registrations, injection). */
export type AnyPagedList = PagedListDeclaration<any>;

/** Declares a paged list; register it with DatabaseModule.forFeature({ lists }). */
export function defineList<T extends ObjectLiteral>(
  declaration: ListDeclaration<T>,
): PagedListDeclaration<T> {
  return { ...declaration, token: Symbol(`PagedList(${declaration.entity.name})`) };
}

/** What a list is filtered by: equality on declared properties, undefined for any value. */
type ListFilters<T> = Partial<Record<keyof T & string, unknown>>;

/** A list's columns by database name, resolved from the entity once the DataSource is open. */
interface ResolvedList {
  metadata: EntityMetadata;
  table: string;
  key: string;
  order: 'ASC' | 'DESC';
  scope?: string;
  filters: Map<string, string>;
  counts: string;
  columns: string;
  pending: boolean;
}

/**
 * Pages of a declared list: page(request, scope, filters) reads committed data only, the rows and
 * the exact total in one snapshot. Statement texts are built once per combination of filters.
 */
export class PagedList<T extends ObjectLiteral> {
  private resolved?: ResolvedList;
  private readonly readers = new Map<string, PageReader>();

  constructor(
    private readonly db: Database,
    private readonly declaration: ListDeclaration<T>,
  ) {}

  async page(
    request: PageRequest,
    scope?: unknown,
    filters: ListFilters<T> = {},
  ): Promise<Page<T>> {
    const { reader, parameters } = this.readerFor(scope, filters);
    const { rows, total } = await reader(request, parameters);
    return new Page(this.db.hydrate<T>(this.list().metadata.target, rows), total, request);
  }

  /** The exact number of rows in scope matching `filters` (a sum of counts, not a COUNT). */
  async total(scope?: unknown, filters: ListFilters<T> = {}): Promise<number> {
    const { list, where, parameters } = this.matching(scope, filters);
    const [row] = await this.db.select(
      this.db.sql(
        `SELECT SUM(rows) AS total FROM (${superblocks(this.db, list, where)}) counted`,
        parameters,
      ),
    );
    return Number(row?.total ?? 0);
  }

  private list(): ResolvedList {
    return (this.resolved ??= resolve(this.db, this.declaration));
  }

  private matching(scope: unknown, filters: ListFilters<T>) {
    const list = this.list();
    const conditions: string[] = [];
    const parameters: Record<string, unknown> = {};
    if (list.scope) {
      if (scope === undefined || scope === null)
        throw new Error('PagedList: a scoped list needs its scope');
      conditions.push(`${list.scope} = :scope`);
      parameters.scope = scope;
    }
    let i = 0;
    for (const [property, column] of list.filters) {
      const value = filters[property as keyof T & string];
      if (value === undefined) continue;
      conditions.push(`${column} = :filter${i}`);
      parameters[`filter${i++}`] = value;
    }
    return { list, where: conditions.length ? conditions.join(' AND ') : '1 = 1', parameters };
  }

  private readerFor(scope: unknown, filters: ListFilters<T>) {
    const { list, where, parameters } = this.matching(scope, filters);
    let reader = this.readers.get(where);
    if (!reader) {
      reader = pageReader(this.db, {
        table: list.table,
        where,
        columns: list.columns,
        key: list.key,
        order: list.order,
        superblocks: superblocks(this.db, list, where),
        blocks: (range) => blocks(this.db, list, where, range),
      });
      this.readers.set(where, reader);
    }
    return { reader, parameters };
  }
}

function resolve<T extends ObjectLiteral>(
  db: Database,
  declaration: ListDeclaration<T>,
): ResolvedList {
  const metadata = db.dataSource.getMetadata(declaration.entity);
  const column = (property: string) => {
    const found = metadata.findColumnWithPropertyName(property);
    if (!found) throw new Error(`${metadata.name} has no column for ${property}`);
    return found.databaseName;
  };
  const { driver } = db.dataSource;
  return {
    metadata,
    table: metadata.tableName,
    key: column(declaration.key),
    order: declaration.order,
    scope: declaration.scope && column(declaration.scope),
    filters: new Map((declaration.filters ?? []).map((property) => [property, column(property)])),
    counts: declaration.counts ?? metadata.tableName,
    columns: metadata.columns
      .filter((c) => !declaration.omit?.includes(c.propertyName as keyof T & string))
      .map((c) => driver.escape(c.databaseName))
      .join(', '),
    // Changes appended by writers and not folded yet count too (ListCountsFolder).
    pending: !!declaration.appendChanges && db.dialect === 'postgres',
  };
}

/** `SELECT block, rows …` per superblock of rows matching `where`, its number as `block`. */
function superblocks(db: Database, list: ResolvedList, where: string): string {
  const folded = `SELECT superblock AS block, rows FROM ${list.counts}_superblocks WHERE ${where}`;
  if (!list.pending) return folded;
  return `${folded} UNION ALL SELECT block / ${BLOCKS_PER_SUPERBLOCK} AS block, rows
    FROM ${list.counts}_block_changes WHERE ${where}`;
}

/** `SELECT block, rows …` per block of rows matching `where`, for the blocks in `range`. */
function blocks(db: Database, list: ResolvedList, where: string, range: string): string {
  const folded = `SELECT block, rows FROM ${list.counts}_blocks WHERE ${where} AND block ${range}`;
  if (!list.pending) return folded;
  return `${folded} UNION ALL SELECT block, rows FROM ${list.counts}_block_changes
    WHERE ${where} AND block ${range}`;
}

export interface BlockCount {
  block: number;
  rows: number;
}

interface PageStart {
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

/** A list as SQL: what pageReader() needs to place and read its pages. */
interface PositionedList {
  /** The table, and the condition its rows must meet. */
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
type PageReader = (
  request: PageRequest,
  parameters?: Record<string, unknown>,
) => Promise<{ rows: Row[]; total: number }>;

/**
 * Reads pages of `list` with `parameters` (its filters).
 *
 * PostgreSQL: one statement (pagedSql()), so the snapshot needs no transaction and the page costs
 * one round trip instead of five (BEGIN, two sums, the page, COMMIT; docs/benchmarks.md). SQLite,
 * in the process: the two sums are read in a read transaction and placed by locate().
 */
function pageReader(db: Database, list: PositionedList): PageReader {
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
interface PlacingStatements {
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
