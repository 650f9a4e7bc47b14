import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import type { Database } from './database.js';
import { FlightBound } from './flight-bound.js';
import {
  type Columns,
  insertColumns,
  insertUnlessConflict,
  insertValues,
} from './insert-unless-conflict.js';
import { preparedName } from './statement.js';
import { eachAlone, type Outcome, TurnBatcher } from './turn-batch.js';

/** One row to insert unless it collides with a stored one (`ON CONFLICT DO NOTHING`). */
export interface RowInsert<T extends ObjectLiteral = ObjectLiteral> {
  entity: EntityTarget<T>;
  values: T;
}

/** The row `values` of `entity`, for insertWithDependents() and webhook rows handlers. */
export function rowInsert<T extends ObjectLiteral>(
  entity: EntityTarget<T>,
  values: T,
): RowInsert<T> {
  return { entity, values };
}

/** A column of the first row whose value is an SQL expression (e.g. the next insertion number). */
export interface ComputedColumn {
  column: string;
  sql: string;
}

interface Call {
  first: RowInsert;
  dependents: RowInsert[];
}

/** A dependent table: its columns, and their types for the casts of VALUES (castType()). */
interface Dependent {
  table: string;
  columns: Columns;
  types: string[];
}

/** What one statement shape needs: the tables' columns, built once. */
interface Shape {
  dataSource: DataSource;
  first: { table: string; columns: Columns; key: number; keyType: string };
  computed?: ComputedColumn;
  /** Per dependent table, by entity: its columns and their types for the VALUES casts. */
  dependents: Map<EntityTarget<ObjectLiteral>, Dependent>;
  /** Statement texts by layout: how many calls, and which of them gave which dependent rows. */
  texts: Map<string, { sql: string; prepared: string }>;
}

/**
 * PostgreSQL: the most batches of one batchedWrites() batcher out at once. One: while a statement
 * of webhook deliveries is out, the next turns' items gather into one larger statement
 * (docs/benchmarks.md, fifteenth session).
 */
export const WRITE_BATCHES_IN_FLIGHT = 1;

/**
 * Writes of concurrent requests as batches: the items of a turn of the event loop go to `run`
 * together (TurnBatcher, at most `maxSize` a batch), which answers one outcome per item. On
 * PostgreSQL at most WRITE_BATCHES_IN_FLIGHT batches of this batcher are out at once; the items
 * of later turns wait and gather into the next (FlightBound, which lets them go anyway when the
 * database has stalled). SQLite answers a batch before the next turn: no bound.
 */
export function batchedWrites<I, T>(
  db: Database,
  run: (items: I[]) => Promise<Outcome<T>[]>,
  maxSize: number,
): (item: I) => Promise<T> {
  const bound = db.dialect === 'sqlite' ? undefined : new FlightBound(WRITE_BATCHES_IN_FLIGHT);
  const batcher = new TurnBatcher(maxSize, run, bound);
  return (item) => batcher.submit(item);
}

/** The most calls one statement carries (each adds a first row and its dependents). */
const MAX_CALLS = 64;
/** Per database, per first row's entity and computed column: the calls of this turn. */
const batchers = new WeakMap<
  Database,
  Map<EntityTarget<ObjectLiteral>, Map<string, (call: Call) => Promise<boolean>>>
>();

/**
 * Inserts `first` unless it collides with a stored row and, only if it went in, each of
 * `dependents` unless it collides: all of it or nothing. Resolves to whether `first` went in.
 *
 * PostgreSQL: the calls of one turn of the event loop into the same first table (or, while the
 * statement before is out, of the turns until it answers: batchedWrites()) share one
 * statement of data-modifying CTEs (`WITH f AS (INSERT … RETURNING key) INSERT … SELECT … JOIN
 * f`), which commits on its own: one round trip and one commit for the group, no BEGIN or COMMIT,
 * where a transaction took four round trips (docs/benchmarks.md, twelfth session). If the statement
 * fails, each call runs again alone, so only the call whose row the database refuses fails. The
 * first row needs a one-column primary key that the row gives (dependents are matched to it by
 * that key).
 * SQLite: the same inserts in a grouped transaction (Database.groupedTransaction).
 */
export async function insertWithDependents(
  db: Database,
  first: RowInsert,
  dependents: RowInsert[],
  computed?: ComputedColumn,
): Promise<boolean> {
  if (db.dialect !== 'postgres') {
    return db.groupedTransaction(
      async (manager) => {
        if (!(await insertUnlessConflict(manager, first.entity, first.values, computed))) {
          return false;
        }
        for (const each of dependents) {
          await insertUnlessConflict(manager, each.entity, each.values);
        }
        return true;
      },
      { concurrent: true },
    );
  }
  let byEntity = batchers.get(db);
  if (!byEntity) batchers.set(db, (byEntity = new Map()));
  let byComputed = byEntity.get(first.entity);
  if (!byComputed) byEntity.set(first.entity, (byComputed = new Map()));
  const computedKey = computed ? `${computed.column}=${computed.sql}` : '';
  let batcher = byComputed.get(computedKey);
  if (!batcher) {
    const shape = shapeOf(db.dataSource, first.entity, computed);
    batcher = batchedWrites(db, (calls: Call[]) => insertTogether(db, shape, calls), MAX_CALLS);
    byComputed.set(computedKey, batcher);
  }
  return batcher({ first, dependents });
}

function shapeOf(
  dataSource: DataSource,
  entity: EntityTarget<ObjectLiteral>,
  computed: ComputedColumn | undefined,
): Shape {
  const metadata = dataSource.getMetadata(entity);
  const columns = insertColumns(dataSource, entity);
  const [primary, ...more] = metadata.primaryColumns;
  const key = columns.indexOf(primary);
  if (more.length > 0 || key < 0) {
    throw new Error(
      `insertWithDependents: ${metadata.tableName} needs a one-column primary key the row gives.`,
    );
  }
  return {
    dataSource,
    first: {
      table: metadata.tableName,
      columns,
      key,
      keyType: castType(dataSource, primary),
    },
    computed,
    dependents: new Map(),
    texts: new Map(),
  };
}

async function insertTogether(
  db: Database,
  shape: Shape,
  calls: Call[],
): Promise<Outcome<boolean>[]> {
  try {
    return (await insertStatement(db, shape, calls)).map((value) => ({ value }));
  } catch (error) {
    if (calls.length === 1) return [{ error }];
    // One refused row fails the whole statement: each call again alone, in order, so that only
    // the refused one fails and, of two calls with one key, the first still wins.
    const alone = (call: Call) => insertStatement(db, shape, [call]).then(([went]) => went);
    return eachAlone(calls, error, alone, { inOrder: true });
  }
}

/** PostgreSQL: the calls' rows as one statement; per call, whether its first row went in. */
async function insertStatement(db: Database, shape: Shape, calls: Call[]): Promise<boolean[]> {
  const { dataSource } = shape;
  const { columns, key } = shape.first;
  // Parameters: every call's first row, then each dependent table's rows in the calls' order.
  const params: unknown[] = [];
  const keys: unknown[] = [];
  const byTable = new Map<Dependent, { calls: number[]; values: unknown[][] }>();
  calls.forEach(({ first, dependents }, call) => {
    const values = insertValues(dataSource, columns, first.values);
    keys.push(values[key]);
    params.push(...values);
    for (const { entity, values: row } of dependents) {
      const table = dependentOf(shape, entity);
      let rows = byTable.get(table);
      if (!rows) byTable.set(table, (rows = { calls: [], values: [] }));
      rows.calls.push(call);
      rows.values.push(insertValues(dataSource, table.columns, row));
    }
  });
  // Dependents find their row by its key: two calls with one key cannot share a statement.
  if (calls.length > 1 && new Set(keys.map(String)).size < calls.length) {
    throw new Error('insertWithDependents: two calls with one key');
  }
  // The text depends on how many calls there are and which of them gave which dependent rows.
  let layout = String(calls.length);
  for (const [table, rows] of byTable) {
    layout += `;${table.table}:${rows.calls.join(',')}`;
    for (const values of rows.values) params.push(...values);
  }
  let text = shape.texts.get(layout);
  if (!text) {
    const sql = statementText(shape, calls.length, byTable);
    shape.texts.set(layout, (text = { sql, prepared: preparedName(sql) }));
  }
  const { rows } = await db.execute({ ...text, params });
  const inserted = new Set(rows.map((row) => String(Object.values(row)[0])));
  // Delete on first use: of two calls with one key, the first in the statement went in.
  return keys.map((each) => inserted.delete(String(each)));
}

/**
 * `WITH f AS (INSERT INTO first … RETURNING key), d0 AS (INSERT INTO dependent … SELECT … FROM
 * (VALUES …) JOIN f …), … SELECT key FROM f`, with the parameters in insertStatement()'s order. A
 * dependent row carries its first row's key, and goes in only if that key came back from f.
 */
function statementText(
  shape: Shape,
  count: number,
  byTable: Map<Dependent, { calls: number[] }>,
): string {
  const escape = (name: string) => shape.dataSource.driver.escape(name);
  const { table, columns, key, keyType } = shape.first;
  const width = columns.length;
  const names = columns.map((column) => escape(column.databaseName));
  const firstTuples = Array.from({ length: count }, (_, call) => {
    const places = columns.map((_column, i) => `$${call * width + i + 1}`);
    if (shape.computed) places.push(shape.computed.sql);
    return `(${places.join(', ')})`;
  });
  if (shape.computed) names.push(escape(shape.computed.column));
  const keyName = names[key];
  const ctes = [
    `f AS (INSERT INTO ${escape(table)} (${names.join(', ')}) VALUES ${firstTuples.join(', ')} ON CONFLICT DO NOTHING RETURNING ${keyName})`,
  ];
  let next = count * width + 1;
  for (const [dependent, rows] of byTable) {
    const columnNames = dependent.columns.map((column) => escape(column.databaseName));
    const tuples = rows.calls.map((call) => {
      const places = dependent.types.map((type) => `$${next++}::${type}`);
      return `($${call * width + key + 1}::${keyType}, ${places.join(', ')})`;
    });
    ctes.push(
      `d${ctes.length} AS (INSERT INTO ${escape(dependent.table)} (${columnNames.join(', ')}) ` +
        `SELECT ${columnNames.map((name) => `v.${name}`).join(', ')} ` +
        `FROM (VALUES ${tuples.join(', ')}) AS v("first key", ${columnNames.join(', ')}) ` +
        `JOIN f ON f.${keyName} = v."first key" ON CONFLICT DO NOTHING)`,
    );
  }
  return `WITH ${ctes.join(', ')} SELECT ${keyName} FROM f`;
}

function dependentOf(shape: Shape, entity: EntityTarget<ObjectLiteral>): Dependent {
  let dependent = shape.dependents.get(entity);
  if (!dependent) {
    const { dataSource } = shape;
    const columns = insertColumns(dataSource, entity);
    dependent = {
      table: dataSource.getMetadata(entity).tableName,
      columns,
      types: columns.map((column) => castType(dataSource, column)),
    };
    shape.dependents.set(entity, dependent);
  }
  return dependent;
}

/**
 * A column's type as PostgreSQL names it, for the casts of a dependent's VALUES (whose parameters
 * would otherwise be text). The driver's normalizeType() gives only the kind for an enum and the
 * element type for an array: an enum is named as TypeORM names its type when it creates the
 * column, and an array takes `[]`.
 */
function castType(dataSource: DataSource, column: Columns[number]): string {
  const { driver } = dataSource;
  let type = driver.normalizeType(column);
  if (type === 'enum') {
    const { schema, tableName } = column.entityMetadata;
    const name = column.enumName ?? `${tableName}_${column.databaseName.toLowerCase()}_enum`;
    type = schema ? `${driver.escape(schema)}.${driver.escape(name)}` : driver.escape(name);
  }
  return column.isArray ? `${type}[]` : type;
}
