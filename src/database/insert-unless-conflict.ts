import type {
  DataSource,
  EntityManager,
  EntityTarget,
  ObjectLiteral,
  QueryResult,
  QueryRunner,
} from 'typeorm';
import { runPostgres } from './database.js';
import { sqliteConnectionsOf } from './sqlite-connections.js';
import { preparedName } from './statement.js';

export type Columns = ReturnType<DataSource['getMetadata']>['columns'];
type Prepared = {
  sql: string;
  columns: Columns;
  /** The multi-row form (PostgreSQL, primary key given by the row), else undefined. */
  many?: {
    /**
     * The statement for `rows` rows, RETURNING the primary key of those that went in, and the
     * name it is prepared under (one per row count).
     */
    sql: (rows: number) => { sql: string; prepared: string };
    /** A row's primary key, from its parameters, as the RETURNING rows are keyed. */
    keyOf: (parameters: unknown[]) => string;
  };
};
/** A call waiting for its multi-row INSERT. */
type Waiting = {
  parameters: unknown[];
  resolve: (went: boolean) => void;
  reject: (error: unknown) => void;
};
/** Calls of the same statement on the same transaction, gathered until the next turn. */
const waiting = new WeakMap<QueryRunner, Map<Prepared, Waiting[]>>();
/** The most rows one multi-row INSERT carries (PostgreSQL allows 65,535 parameters). */
const MAX_ROWS_PER_INSERT = 500;
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
    const primary = metadata.primaryColumns.map((key) => columns.indexOf(key));
    const returning = ` ON CONFLICT DO NOTHING RETURNING ${primary.map((i) => names[i]).join(', ')}`;
    // Built once per row count (a group holds at most a few dozen deliveries).
    const manyTexts = new Map<number, { sql: string; prepared: string }>();
    statement = {
      sql: `${head}(${valuesFrom(0)}) ON CONFLICT DO NOTHING`,
      columns,
      many:
        dataSource.options.type === 'postgres' && primary.length > 0 && !primary.includes(-1)
          ? {
              sql: (rows) => {
                let text = manyTexts.get(rows);
                if (text === undefined) {
                  const tuples = Array.from(
                    { length: rows },
                    (_, row) => `(${valuesFrom(row * columns.length)})`,
                  );
                  const sql = head + tuples.join(', ') + returning;
                  manyTexts.set(rows, (text = { sql, prepared: preparedName(sql) }));
                }
                return text;
              },
              keyOf: (parameters) => primary.map((i) => String(parameters[i])).join('\u0000'),
            }
          : undefined,
    };
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
  if (manager.queryRunner && statement.many) {
    return insertTogether(manager.queryRunner, statement, parameters);
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
export function insertColumns(
  dataSource: DataSource,
  entity: EntityTarget<ObjectLiteral>,
): Columns {
  return dataSource.getMetadata(entity).columns.filter((column) => column.isInsert);
}

/** `row`'s values for `columns`, converted as TypeORM converts them for the driver. */
export function insertValues(
  dataSource: DataSource,
  columns: Columns,
  row: ObjectLiteral,
): unknown[] {
  return columns.map((column) => {
    const value: unknown = column.getEntityValue(row);
    if (value === undefined) {
      throw new Error(`An inserted row has no value for ${column.propertyName}.`);
    }
    return dataSource.driver.preparePersistentValue(value, column);
  });
}

/**
 * PostgreSQL: concurrent calls of one statement in one transaction (the deliveries of a grouped
 * transaction, Database.groupedTransaction()) go to the database as one multi-row INSERT in the
 * next turn of the event loop: one round trip instead of one each. RETURNING names the rows that
 * went in by primary key; of two calls with the same key, the first in the statement went in.
 */
function insertTogether(
  runner: QueryRunner,
  statement: Prepared,
  parameters: unknown[],
): Promise<boolean> {
  let byStatement = waiting.get(runner);
  if (!byStatement) waiting.set(runner, (byStatement = new Map()));
  let calls = byStatement.get(statement);
  if (!calls) {
    const gathered: Waiting[] = (calls = []);
    byStatement.set(statement, gathered);
    setImmediate(() => {
      byStatement.delete(statement);
      for (let i = 0; i < gathered.length; i += MAX_ROWS_PER_INSERT) {
        void insertRows(runner, statement, gathered.slice(i, i + MAX_ROWS_PER_INSERT));
      }
    });
  }
  return new Promise((resolve, reject) => calls.push({ parameters, resolve, reject }));
}

async function insertRows(runner: QueryRunner, statement: Prepared, calls: Waiting[]) {
  const many = statement.many!;
  try {
    const { rows } = await runPostgres(runner, {
      ...many.sql(calls.length),
      params: calls.flatMap((call) => call.parameters),
    });
    // The returned rows hold the primary key's columns, in the key's order.
    const inserted = new Set(rows.map((row) => Object.values(row).map(String).join('\u0000')));
    for (const call of calls) {
      // Delete on first use: a second call with the same key collided with the first.
      call.resolve(inserted.delete(many.keyOf(call.parameters)));
    }
  } catch (error) {
    for (const call of calls) call.reject(error);
  }
}
