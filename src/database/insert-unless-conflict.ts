import type { DataSource, EntityManager, EntityTarget, ObjectLiteral, QueryResult } from 'typeorm';

type Columns = ReturnType<DataSource['getMetadata']>['columns'];
type Prepared = { sql: string; columns: Columns };
/** Per data source, per entity, per computed column: the statement, built once. */
const statements = new WeakMap<DataSource, Map<unknown, Map<string, Prepared>>>();

/**
 * `INSERT … ON CONFLICT DO NOTHING` of one row; true when it went in, false when it collided
 * with an existing row (any unique constraint). The row must give every column: the statement
 * lists them all. `computed` adds one column whose value is an SQL expression the database
 * evaluates in the same statement (e.g. the next insertion number).
 *
 * For hot paths: the SQL is built once per entity and connection from the entity's metadata
 * (one statement for SQLite and PostgreSQL, with the driver's placeholders and value conversion);
 * building it with the query builder on every call costs more CPU than running it.
 */
export async function insertUnlessConflict<T extends ObjectLiteral>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  row: T,
  computed?: { column: string; sql: string },
): Promise<boolean> {
  const dataSource = manager.connection;
  const { driver } = dataSource;
  let byEntity = statements.get(dataSource);
  if (!byEntity) statements.set(dataSource, (byEntity = new Map()));
  let byComputed = byEntity.get(entity);
  if (!byComputed) byEntity.set(entity, (byComputed = new Map()));
  const computedKey = computed ? `${computed.column}=${computed.sql}` : '';
  let statement = byComputed.get(computedKey);
  if (!statement) {
    const { tableName } = dataSource.getMetadata(entity);
    // Columns the database fills itself (insert: false) are left to it.
    const columns = dataSource.getMetadata(entity).columns.filter((column) => column.isInsert);
    const names = columns.map((column) => driver.escape(column.databaseName));
    const values = columns.map((column, i) => driver.createParameter(column.databaseName, i));
    if (computed) {
      names.push(driver.escape(computed.column));
      values.push(computed.sql);
    }
    statement = {
      sql: `INSERT INTO ${driver.escape(tableName)} (${names.join(', ')}) VALUES (${values.join(', ')}) ON CONFLICT DO NOTHING`,
      columns,
    };
    byComputed.set(computedKey, statement);
  }
  const parameters = statement.columns.map((column) => {
    const value: unknown = column.getEntityValue(row);
    if (value === undefined) {
      throw new Error(`insertUnlessConflict: no value for ${column.propertyName}.`);
    }
    return driver.preparePersistentValue(value, column);
  });
  const runner = manager.queryRunner ?? dataSource.createQueryRunner();
  try {
    const result = (await runner.query(statement.sql, parameters, true)) as QueryResult;
    return result.affected === 1;
  } finally {
    if (!manager.queryRunner) await runner.release();
  }
}
