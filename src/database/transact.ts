import type { Database, Statement as SqliteStatement } from 'better-sqlite3';
import { hash } from 'node:crypto';
import type { Pool } from 'pg';
import type { DataSource, ObjectLiteral, QueryRunner, SelectQueryBuilder } from 'typeorm';
import {
  inTurn,
  inTurnBatch,
  type Outcome,
  sqliteConnection,
  type TurnBatch,
} from './transaction.js';

export interface Statement {
  sql: string;
  params: unknown[];
  /** Set for texts that repeat (see sql()): PostgreSQL then parses and plans them once. */
  prepared?: string;
}

export interface StatementResult {
  rows: Record<string, unknown>[];
  /** Rows inserted, updated or deleted (or returned, for a statement with RETURNING). */
  affected: number;
}

/**
 * A unit of work written once for both databases: it yields each statement and receives its
 * result, so the same steps can run synchronously on SQLite and asynchronously on PostgreSQL.
 */
export type Work<T> = Generator<Statement, T, StatementResult>;

/** Stands for a named parameter while a statement's text is translated once. */
class Placeholder {
  constructor(readonly name: string) {}
}

interface Template {
  sql: string;
  names: string[];
  /** Name under which PostgreSQL keeps the statement prepared on each pooled connection. */
  prepared: string;
}

const templates = new WeakMap<DataSource, Map<string, Template | null>>();

/**
 * `text` with `:name` / `:...list` parameters, in the driver's own placeholder style.
 *
 * The translation is done once per text (TypeORM's escapeQueryWithParameters runs regular
 * expressions on every call, and on SQLite writes numbers into the text, so that each id made a
 * new statement to prepare). Texts with list parameters are translated on every call.
 */
export function sql(
  dataSource: DataSource,
  text: string,
  parameters: ObjectLiteral = {},
): Statement {
  const names = Object.keys(parameters);
  let cache = templates.get(dataSource);
  if (!cache) templates.set(dataSource, (cache = new Map()));
  const key = `${names.join(',')}\0${text}`;
  let template = cache.get(key);
  if (template === undefined) {
    template = translate(dataSource, text, names);
    cache.set(key, template);
  }
  if (template === null || names.some((name) => typeof parameters[name] === 'function')) {
    const [query, params] = dataSource.driver.escapeQueryWithParameters(text, parameters);
    return { sql: query, params };
  }
  return {
    sql: template.sql,
    params: template.names.map((name) => parameters[name]),
    prepared: template.prepared,
  };
}

function translate(dataSource: DataSource, text: string, names: string[]): Template | null {
  if (/:\.\.\./.test(text)) return null;
  const marks = Object.fromEntries(names.map((name) => [name, new Placeholder(name)]));
  const [query, params] = dataSource.driver.escapeQueryWithParameters(text, marks);
  if (!params.every((p) => p instanceof Placeholder)) return null;
  return {
    sql: query,
    names: params.map((p: Placeholder) => p.name),
    prepared: `s_${hash('sha1', query, 'base64url')}`,
  };
}

/** One read statement, outside any transaction (a single statement is its own snapshot). */
export async function select(
  dataSource: DataSource,
  statement: Statement,
): Promise<Record<string, unknown>[]> {
  const sqlite = sqliteConnection(dataSource);
  if (sqlite) return runSqlite(dataSource, sqlite, statement).rows;
  if (!statement.prepared || !dataSource.isInitialized) {
    return (await dataSource.query(statement.sql, statement.params)) as Record<string, unknown>[];
  }
  // Straight to the pool, as a named statement: no query runner to create and release, and the
  // server parses and plans the text once per connection instead of on every request.
  dataSource.logger.logQuery(statement.sql, statement.params);
  const pool = (dataSource.driver as unknown as { master: Pool }).master;
  const result = await pool.query({
    name: statement.prepared,
    text: statement.sql,
    values: statement.params,
  });
  return result.rows as Record<string, unknown>[];
}

export function statementOf(qb: SelectQueryBuilder<ObjectLiteral>): Statement {
  const [query, params] = qb.getQueryAndParameters();
  return { sql: query, params };
}

/**
 * Runs `work` as one transaction: `write` for changes that must land together (a row and the
 * counter that counts it), `read` for several reads that must see one snapshot (a total and the
 * page it describes).
 *
 * Why not `dataSource.transaction()`: TypeORM's better-sqlite3 driver shares ONE connection
 * between all requests, and its async query runner yields between statements, so another
 * request's statements would run inside this transaction (and a second transaction would become
 * a savepoint of the first). On SQLite the work therefore runs synchronously in better-sqlite3's
 * own transaction, where nothing can interleave, and in its turn (inTurn), so that it cannot land
 * inside another module's open transaction either; PostgreSQL gets a pooled connection of its own.
 */
export async function transact<T>(
  dataSource: DataSource,
  mode: 'read' | 'write',
  work: () => Work<T>,
): Promise<T> {
  const sqlite = sqliteConnection(dataSource);
  if (sqlite) {
    const body = () => drive(work(), (statement) => runSqlite(dataSource, sqlite, statement));
    // IMMEDIATE takes the write lock up front: no lock upgrade that could fail half-way.
    return inTurn(dataSource, () =>
      mode === 'write' ? inTransaction(sqlite).immediate(body) : inTransaction(sqlite)(body),
    );
  }

  const runner = dataSource.createQueryRunner('master');
  try {
    // REPEATABLE READ: every read of the work sees the same snapshot.
    await runner.startTransaction(mode === 'read' ? 'REPEATABLE READ' : undefined);
    const steps = work();
    let step = steps.next();
    while (!step.done) step = steps.next(await runPostgres(runner, step.value));
    await runner.commitTransaction();
    return step.value;
  } catch (error) {
    if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    throw error;
  } finally {
    await runner.release();
  }
}

/**
 * One statement, atomic by itself (e.g. UPDATE … RETURNING), answered once it is committed. On
 * SQLite, statements issued together share one commit (see groupCommitted); on PostgreSQL each
 * commits on its own.
 */
export async function execute(
  dataSource: DataSource,
  statement: Statement,
): Promise<StatementResult> {
  const sqlite = sqliteConnection(dataSource);
  if (sqlite) return groupCommitted(dataSource, sqlite, statement);
  const runner = dataSource.createQueryRunner('master');
  try {
    return await runPostgres(runner, statement);
  } finally {
    await runner.release();
  }
}

const pendingWrites = new WeakMap<DataSource, TurnBatch<Statement, StatementResult>>();

/**
 * SQLite group commit: single-statement writes that arrive in the same turn of the event loop
 * (concurrent requests) run in ONE transaction, and each caller is answered after its commit.
 * A commit costs far more than a one-row UPDATE on SQLite, so this is most of a PUT's database
 * time under load. A statement that fails is undone alone (SQLite rolls back just that
 * statement) and only its caller gets the error; if SQLite had to abandon the whole transaction,
 * or the commit fails, every caller of the batch gets the error and nothing of it is kept.
 */
function groupCommitted(
  dataSource: DataSource,
  db: Database,
  statement: Statement,
): Promise<StatementResult> {
  return inTurnBatch(pendingWrites, dataSource, statement, Infinity, (statements) =>
    inTurn(dataSource, () => commitWrites(dataSource, db, statements)),
  );
}

function commitWrites(
  dataSource: DataSource,
  db: Database,
  statements: Statement[],
): Outcome<StatementResult>[] {
  return inTransaction(db).immediate(() =>
    statements.map((statement) => {
      try {
        return { value: runSqlite(dataSource, db, statement) };
      } catch (error) {
        // SQLite abandoned the transaction (I/O error, disk full…): the batch fails as one.
        if (!db.inTransaction) throw error;
        return { error };
      }
    }),
  );
}

interface InTransaction {
  <T>(body: () => T): T;
  immediate<T>(body: () => T): T;
}
const transactionRunners = new WeakMap<Database, InTransaction>();

/**
 * better-sqlite3's transaction function for this connection, made once: it runs the body it is
 * given (`db.transaction()` builds four wrapper functions each time it is called; a PUT called it
 * once per commit). Deferred when called, IMMEDIATE with `.immediate(body)`.
 */
function inTransaction(db: Database): InTransaction {
  let run = transactionRunners.get(db);
  if (!run) {
    run = db.transaction((body: () => unknown) => body()) as unknown as InTransaction;
    transactionRunners.set(db, run);
  }
  return run;
}

function drive<T>(steps: Work<T>, run: (statement: Statement) => StatementResult): T {
  let step = steps.next();
  while (!step.done) step = steps.next(run(step.value));
  return step.value;
}

function runSqlite(
  dataSource: DataSource,
  db: Database,
  { sql, params }: Statement,
): StatementResult {
  // Logged like TypeORM's own queries, so `logging` shows these statements too.
  dataSource.logger.logQuery(sql, params);
  const bound = params.map(bindable);
  const prepared = prepare(db, sql);
  if (prepared.reader) {
    const rows = prepared.all(...bound) as Record<string, unknown>[];
    return { rows, affected: rows.length };
  }
  return { rows: [], affected: prepared.run(...bound).changes };
}

/**
 * better-sqlite3 binds every JS number as a REAL, so 7 written to a text column would be stored
 * as '7.0'; integers are bound as INTEGER (BigInt), as TypeORM's inlined literals would be.
 */
function bindable(value: unknown): unknown {
  if (typeof value === 'boolean') return Number(value);
  // As TypeORM writes dates on SQLite: UTC, 'YYYY-MM-DD HH:MM:SS.SSS'.
  if (value instanceof Date) return value.toISOString().replace('T', ' ').replace('Z', '');
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  return value;
}

const STATEMENT_CACHE_SIZE = 256;
const statementCache = new WeakMap<Database, Map<string, SqliteStatement>>();

/** Prepared once per connection: a list query or a bulk insert repeats the same SQL. */
function prepare(db: Database, sql: string): SqliteStatement {
  let cache = statementCache.get(db);
  if (!cache) statementCache.set(db, (cache = new Map()));
  let prepared = cache.get(sql);
  if (!prepared) {
    prepared = db.prepare(sql);
    if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(sql, prepared);
  }
  return prepared;
}

async function runPostgres(
  runner: QueryRunner,
  { sql, params }: Statement,
): Promise<StatementResult> {
  const result = await runner.query(sql, params, true);
  return { rows: result.records ?? [], affected: result.affected ?? 0 };
}
