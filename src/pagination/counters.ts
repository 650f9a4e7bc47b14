import type { DataSource, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { sql, type Statement } from '../database/transact.js';
import { Counter } from './counter.entity.js';

/**
 * The statement that adds `by` to a counter. Run it in the same transaction as the inserts it
 * counts (transact(…, 'write', …)): the counter row's lock also orders concurrent inserters.
 */
export function incrementCounter(dataSource: DataSource, name: string, by: number): Statement {
  return sql(dataSource, 'UPDATE counters SET value = value + :by WHERE name = :name', {
    by,
    name,
  });
}

/** The counter as a query selecting `total`, for paginate()'s `count` option. */
export function counterQuery(
  dataSource: DataSource,
  name: string,
): SelectQueryBuilder<ObjectLiteral> {
  return dataSource
    .createQueryBuilder()
    .select('counter.value', 'total')
    .from(Counter, 'counter')
    .where('counter.name = :name', { name });
}
