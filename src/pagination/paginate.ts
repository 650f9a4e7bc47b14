import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { Database } from '../database/database.js';
import { type Statement, statementOf, type Work } from '../database/statement.js';
import { Page } from './page.js';
import type { PageRequest } from './page-query.dto.js';

export interface PaginateOptions {
  /** Column that orders the list (unique, indexed). Default `id`. */
  orderBy?: string;
  order?: 'ASC' | 'DESC';
  /**
   * A statement selecting the exact total as `total`, cheaper than COUNT(*) (a counter kept by
   * the database: rowCountOf() in database/row-counters.ts). It must count exactly the rows `qb`
   * selects.
   */
  count?: Statement;
}

/**
 * One page of `qb`, fast on big tables:
 * - stable order on a unique indexed column;
 * - ids first (LIMIT/OFFSET on the index only), then the rows for those ids (deferred join);
 * - when the total is known, a page in the back half is read from the other end, so the
 *   last pages cost what the first ones do;
 * - no COUNT when the page itself proves the total (a partly filled page).
 *
 * The total and the ids are read in one snapshot: reading from the end counts positions back
 * from the total, so a row committed between the two reads would shift the page.
 *
 * `qb` must yield one row per record (no to-many joins), like any LIMIT/OFFSET query.
 */
export async function paginate<T extends ObjectLiteral>(
  db: Database,
  qb: SelectQueryBuilder<T>,
  request: PageRequest,
  options: PaginateOptions = {},
): Promise<Page<T>> {
  const { limit, offset } = request;
  const column = `${qb.alias}.${options.orderBy ?? 'id'}`;
  const order = options.order ?? 'ASC';
  const countQuery = options.count;

  const { ids, total } = await db.read(function* (): Work<{
    ids: unknown[];
    total: number;
  }> {
    const known = countQuery ? toTotal((yield countQuery).rows) : undefined;
    if (known !== undefined && offset >= known) return { ids: [], total: known };

    const fromEnd = known !== undefined && offset > known / 2;
    const idsQuery = qb
      .clone()
      .select(column, 'id')
      .orderBy(column, fromEnd ? flip(order) : order);
    if (fromEnd) {
      idsQuery.offset(Math.max(0, known - offset - limit)).limit(Math.min(limit, known - offset));
    } else {
      idsQuery.offset(offset).limit(limit);
    }
    const ids = (yield statementOf(idsQuery)).rows.map((row) => row.id);
    if (fromEnd) ids.reverse();

    if (known !== undefined) return { ids, total: known };
    if (ids.length > 0 && ids.length < limit) return { ids, total: offset + ids.length };
    if (ids.length === 0 && offset === 0) return { ids, total: 0 };
    return { ids, total: toTotal((yield statementOf(countAll(qb, column))).rows) };
  });

  if (ids.length === 0) return new Page([], total, request);
  // A TypeORM read outside a transaction: Database sends it to committed data too.
  const rows = await qb
    .clone()
    .andWhere(`${column} IN (:...pageIds)`, { pageIds: ids })
    .orderBy(column, order)
    .getMany();
  return new Page(rows, total, request);
}

const flip = (order: 'ASC' | 'DESC') => (order === 'ASC' ? 'DESC' : 'ASC');

/** COUNT(*) of the base query; DISTINCT only when joins could repeat a record. */
function countAll(qb: SelectQueryBuilder<ObjectLiteral>, column: string) {
  const joined = qb.expressionMap.joinAttributes.length > 0;
  return qb
    .clone()
    .orderBy()
    .select(joined ? `COUNT(DISTINCT ${column})` : 'COUNT(*)', 'total');
}

function toTotal(rows: Record<string, unknown>[]): number {
  // PostgreSQL answers COUNT(*) as a bigint string.
  const total = Number(rows[0]?.total);
  if (!Number.isSafeInteger(total) || total < 0) {
    throw new Error(`The count query answered ${JSON.stringify(rows[0])}, not a total.`);
  }
  return total;
}
