import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { Page } from './page.js';
import type { PageRequest } from './page-query.dto.js';

export interface PaginateOptions {
  /** Column that orders the list (unique, indexed). Default `id`. */
  orderBy?: string;
  order?: 'ASC' | 'DESC';
  /** An exact total cheaper than COUNT(*) (a maintained counter); otherwise COUNT on the query. */
  count?: () => Promise<number>;
}

/**
 * One page of `qb`, fast on big tables:
 * - stable order on a unique indexed column;
 * - ids first (LIMIT/OFFSET on the index only), then the rows for those ids (deferred join);
 * - when the total is known, a page in the back half is read from the other end, so the
 *   last pages cost what the first ones do;
 * - no COUNT when the page itself proves the total (a partly filled page).
 */
export async function paginate<T extends ObjectLiteral>(
  qb: SelectQueryBuilder<T>,
  request: PageRequest,
  options: PaginateOptions = {},
): Promise<Page<T>> {
  const { limit, offset } = request;
  const alias = qb.alias;
  const column = `${alias}.${options.orderBy ?? 'id'}`;
  const order = options.order ?? 'ASC';
  const flip = (o: 'ASC' | 'DESC') => (o === 'ASC' ? 'DESC' : 'ASC');

  let total = options.count ? await options.count() : undefined;
  if (total !== undefined && offset >= total) return new Page([], total, request);

  const fromEnd = total !== undefined && offset > total / 2;
  const ids = qb
    .clone()
    .select(column, 'id')
    .orderBy(column, fromEnd ? flip(order) : order);
  if (fromEnd) {
    const endOffset = Math.max(0, total! - offset - limit);
    ids.offset(endOffset).limit(Math.min(limit, total! - offset));
  } else {
    ids.offset(offset).limit(limit);
  }
  const idList: unknown[] = (await ids.getRawMany<{ id: unknown }>()).map((row) => row.id);
  if (fromEnd) idList.reverse();

  if (total === undefined) {
    if (idList.length > 0 && idList.length < limit) total = offset + idList.length;
    else if (idList.length === 0 && offset === 0) total = 0;
    else total = await qb.clone().orderBy().getCount();
  }
  if (idList.length === 0) return new Page([], total, request);

  const rows = await qb
    .clone()
    .andWhere(`${column} IN (:...pageIds)`, { pageIds: idList })
    .orderBy(column, order)
    .getMany();
  return new Page(rows, total, request);
}
