import type { DataSource, EntityManager, EntityTarget, ObjectLiteral, QueryResult } from 'typeorm';
import { sqliteConnectionsOf } from './sqlite-connections.js';

type Columns = ReturnType<DataSource['getMetadata']>['columns'];
type Prepared = { sql: string; columns: Columns };
/** Per data source, per entity, per numbering: the statement, built once. */
const statements = new WeakMap<DataSource, Map<unknown, Map<string, Prepared>>>();

/**
 * A column numbered in order of insertion, by the insert itself: `key` (an entity property) is
 * given the next value of PostgreSQL's `sequence`, or on SQLite, whose one writer inserts in
 * turns, the table's largest key + 1.
 */
interface Numbering<T> {
  key: keyof T & string;
  sequence: string;
}

/**
 * `INSERT … ON CONFLICT DO NOTHING` of one row; true when it went in, false when it collided
 * with an existing row (any unique constraint). The row must give every column: the statement
 * lists them all, and `numbering`'s key besides, valued in the same statement.
 *
 * For hot paths: the SQL is built once per entity and connection from the entity's metadata
 * (one statement for SQLite and PostgreSQL, with the driver's placeholders and value conversion);
 * building it with the query builder on every call costs more CPU than running it.
 */
export async function insertUnlessConflict<T extends ObjectLiteral>(
  manager: EntityManager,
  entity: EntityTarget<T>,
  row: T,
  numbering?: Numbering<T>,
): Promise<boolean> {
  const dataSource = manager.connection;
  const { driver } = dataSource;
  let byEntity = statements.get(dataSource);
  if (!byEntity) statements.set(dataSource, (byEntity = new Map()));
  let byNumbering = byEntity.get(entity);
  if (!byNumbering) byEntity.set(entity, (byNumbering = new Map()));
  const numberingKey = numbering ? `${numbering.key}=${numbering.sequence}` : '';
  let statement = byNumbering.get(numberingKey);
  if (!statement) {
    const metadata = dataSource.getMetadata(entity);
    const computed = numbering && numbered(dataSource, entity, numbering);
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
    byNumbering.set(numberingKey, statement);
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

/** `numbering` as a column and the SQL expression of its value, for this database. */
function numbered<T extends ObjectLiteral>(
  dataSource: DataSource,
  entity: EntityTarget<T>,
  { key, sequence }: Numbering<T>,
): { column: string; sql: string } {
  const metadata = dataSource.getMetadata(entity);
  const column = metadata.findColumnWithPropertyName(key);
  if (!column) throw new Error(`${metadata.name} has no column for ${key}`);
  const name = column.databaseName;
  return {
    column: name,
    sql:
      dataSource.options.type === 'postgres'
        ? `nextval('${sequence}')`
        : `(SELECT IFNULL(MAX(${name}), 0) + 1 FROM ${metadata.tableName})`,
  };
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
