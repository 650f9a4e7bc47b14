import type { DataSource, EntityManager, EntityTarget, ObjectLiteral, QueryResult } from 'typeorm';
import { sqliteConnectionsOf } from './sqlite-connections.js';

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
    const metadata = dataSource.getMetadata(entity);
    const columns = insertColumns(dataSource, entity);
    const names = columns.map((column) => driver.escape(column.databaseName));
    const valuesFrom = (first: number) =>
      [
        ...columns.map((column, i) => driver.createParameter(column.databaseName, first + i)),
        ...(computed ? [computed.sql] : []),
      ].join(', ');
    if (computed) names.push(driver.escape(computed.column));
    const head = `INSERT INTO ${driver.escape(metadata.tableName)} (${names.join(', ')}) VALUES `;
    statement = { sql: `${head}(${valuesFrom(0)}) ON CONFLICT DO NOTHING`, columns };
    byComputed.set(computedKey, statement);
  }
  const parameters = insertValues(dataSource, statement.columns, row);
  // SQLite, in a write transaction (so on the writer, in its turn): straight to the writer's
  // prepared statement. TypeORM's query runner wraps each query in events and awaits that cost
  // a webhook delivery more than the insert itself (docs/benchmarks.md).
  const sqlite = manager.queryRunner?.isTransactionActive
    ? sqliteConnectionsOf(dataSource)
    : undefined;
  if (sqlite) {
    return sqlite.run(sqlite.writer, { sql: statement.sql, params: parameters }).affected === 1;
  }
  const runner = manager.queryRunner ?? dataSource.createQueryRunner();
  try {
    const result = (await runner.query(statement.sql, parameters, true)) as QueryResult;
    return result.affected === 1;
  } finally {
    if (!manager.queryRunner) await runner.release();
  }
}

/** The columns an insert of `entity` lists: those the database fills itself (insert: false) are left to it. */
function insertColumns(dataSource: DataSource, entity: EntityTarget<ObjectLiteral>): Columns {
  return dataSource.getMetadata(entity).columns.filter((column) => column.isInsert);
}

/** `row`'s values for `columns`, converted as TypeORM converts them for the driver. */
function insertValues(dataSource: DataSource, columns: Columns, row: ObjectLiteral): unknown[] {
  return columns.map((column) => {
    const value: unknown = column.getEntityValue(row);
    if (value === undefined) {
      throw new Error(`An inserted row has no value for ${column.propertyName}.`);
    }
    return dataSource.driver.preparePersistentValue(value, column);
  });
}
