import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import DataLoader from 'dataloader';
import type { Pool, PoolClient } from 'pg';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';
import type {
  DataSource,
  EntityManager,
  EntityTarget,
  Logger,
  ObjectLiteral,
  QueryRunner,
} from 'typeorm';
import { SqliteConnections } from './sqlite-connections.js';
import type { Row, Statement, StatementResult, Work } from './statement.js';
import { type Outcome, TurnBatcher } from './turn-batch.js';
import { isDatabaseUnavailable } from '../common/exceptions/database-errors.js';
import {
  markTransaction,
  postgresClientOf,
  postgresPoolOf,
  releaseBroken,
} from './typeorm-internals.js';

/** An SQL text for each database the service runs on (see Database.sql()). */
interface TextPerDatabase {
  postgres: string;
  sqlite: string;
}

interface DatabaseOptions {
  /** How long a SQLite write waits for a lock held by another process before failing (503). */
  lockTimeoutMs: number;
}

/**
 * The one way the service reads and writes, and the only code that knows the two drivers.
 *
 * - Reads (select, read, and TypeORM repository reads outside a transaction) see committed data
 *   only: on SQLite they run on a read-only connection (see SqliteConnections); on PostgreSQL
 *   each has a pooled connection of its own.
 * - Writes (execute, write, transaction) are transactions: on SQLite they take turns on the one
 *   writer connection, wait for another process's lock without blocking the event loop, and fail
 *   with a 503 past SQLITE_LOCK_TIMEOUT_MS; single statements of one turn share one commit.
 *
 * Feature code uses it through its repositories; `dataSource` stays available for TypeORM's
 * metadata and query builders (whose reads are routed as above).
 */
@Injectable()
export class Database implements OnModuleDestroy {
  /**
   * Which database, for the data layer alone (ESLint refuses a read of it outside src/database/):
   * feature code asks for what differs instead (sql() with a text per database, writesTakeTurns).
   */
  readonly dialect: 'sqlite' | 'postgres';
  private readonly writes: TurnBatcher<Statement, StatementResult>;
  /** PostgreSQL: each entity's updates of the current turn (update()). */
  private readonly updates = new Map<EntityTarget<ObjectLiteral>, TurnBatcher<Update, unknown>>();

  private constructor(
    readonly dataSource: DataSource,
    private readonly sqlite: SqliteConnections | undefined,
  ) {
    this.dialect = sqlite ? 'sqlite' : 'postgres';
    this.writes = new TurnBatcher(Infinity, (statements) => this.commitTogether(statements));
  }

  /** Wraps an initialised (migrated) DataSource; on SQLite opens the reader beside it. */
  static async open(dataSource: DataSource, options: DatabaseOptions): Promise<Database> {
    const sqlite =
      dataSource.options.type === 'better-sqlite3'
        ? await SqliteConnections.open(dataSource, options.lockTimeoutMs)
        : undefined;
    return new Database(dataSource, sqlite);
  }

  async onModuleDestroy() {
    await this.sqlite?.close();
  }

  /**
   * `text` with `:name` / `:...list` parameters, in the driver's own placeholder style. SQL that
   * cannot be written for both databases (generated series, their own functions) gives a text for
   * each; this database's is taken.
   */
  sql(text: string | TextPerDatabase, parameters: ObjectLiteral = {}): Statement {
    const chosen = typeof text === 'string' ? text : this.sqlite ? text.sqlite : text.postgres;
    // On SQLite integers are bound, not written into the text (bindIntegers()).
    const [sql, params] = this.dataSource.driver.escapeQueryWithParameters(chosen, parameters);
    return { sql, params };
  }

  /** Every column of `entity`, by database name, for the select list of a raw read. */
  columnsOf(entity: EntityTarget<ObjectLiteral>): string {
    const { driver } = this.dataSource;
    return this.dataSource
      .getMetadata(entity)
      .columns.map((column) => driver.escape(column.databaseName))
      .join(', ');
  }

  /**
   * A read of one `entity` row by its primary key, for the hottest reads (GET company). The reads
   * of one turn of the event loop (concurrent requests) go to the database as one statement,
   * without a cache: each is issued after its request arrived, so it sees every write answered
   * before. Without it, GET company on this machine fell below 4x a plain NestJS build on both
   * databases (docs/benchmarks.md). Reads committed data, as select() does.
   */
  byKey<T extends ObjectLiteral>(
    entity: EntityTarget<T>,
  ): (key: number | string) => Promise<T | null> {
    const { driver } = this.dataSource;
    const metadata = this.dataSource.getMetadata(entity);
    const [primary] = metadata.primaryColumns;
    const key = driver.escape(primary.databaseName);
    const head = `SELECT ${this.columnsOf(entity)} FROM ${driver.escape(metadata.tableName)} WHERE `;
    // One text whatever the number of keys: an array parameter.
    const text = this.sqlite
      ? `${head}${key} IN (SELECT value FROM json_each(:keys))`
      : `${head}${key} = ANY(:keys)`;
    const loader = new DataLoader<number | string, T | null>(
      async (keys) => {
        const parameters = { keys: this.sqlite ? JSON.stringify(keys) : keys };
        const found = new Map<unknown, T>();
        for (const row of this.hydrate(entity, await this.select(this.sql(text, parameters)))) {
          found.set(primary.getEntityValue(row), row);
        }
        return keys.map((each) => found.get(each) ?? null);
      },
      { cache: false, maxBatchSize: 100, batchScheduleFn: (dispatch) => setImmediate(dispatch) },
    );
    return (each) => loader.load(each);
  }

  /**
   * A read of one `entity` row by `where` (a condition with `:name` parameters), its text built
   * once: for hot single-row reads, where TypeORM's `findOneBy()` would build its query and
   * transform its result on every call (docs/benchmarks.md, seventh session). Reads committed data,
   * as select() does.
   */
  oneBy<T extends ObjectLiteral>(
    entity: EntityTarget<T>,
    where: string,
  ): (parameters: ObjectLiteral) => Promise<T | null> {
    const { tableName } = this.dataSource.getMetadata(entity);
    const text = `SELECT ${this.columnsOf(entity)} FROM ${this.dataSource.driver.escape(tableName)} WHERE ${where}`;
    return async (parameters) =>
      this.hydrate(entity, await this.select(this.sql(text, parameters)))[0] ?? null;
  }

  /**
   * Rows of a raw read of columnsOf(entity) as entities, with TypeORM's own value conversion
   * (dates, numbers): the same objects a repository read gives, without building its query.
   */
  hydrate<T extends ObjectLiteral>(entity: EntityTarget<T>, rows: Row[]): T[] {
    const { driver } = this.dataSource;
    const metadata = this.dataSource.getMetadata(entity);
    return rows.map((row) => {
      const hydrated = metadata.create() as T;
      for (const column of metadata.columns) {
        column.setEntityValue(
          hydrated,
          driver.prepareHydratedValue(row[column.databaseName], column) as unknown,
        );
      }
      return hydrated;
    });
  }

  /** An entity as a row of its table, with TypeORM's value conversion (hydrate()'s inverse). */
  dehydrate<T extends ObjectLiteral>(entity: EntityTarget<T>, value: T): Row {
    const { driver } = this.dataSource;
    const row: Row = {};
    for (const column of this.dataSource.getMetadata(entity).columns) {
      row[column.databaseName] = driver.preparePersistentValue(
        column.getEntityValue(value),
        column,
      ) as unknown;
    }
    return row;
  }

  /** One read statement on committed data. */
  async select(statement: Statement): Promise<Row[]> {
    const sqlite = this.sqlite;
    if (sqlite) {
      if (sqlite.separateReader) return sqlite.run(sqlite.reader, statement).rows;
      return sqlite.inTurn(() => sqlite.run(sqlite.reader, statement).rows);
    }
    return (await this.runOnPostgres(statement)).rows;
  }

  /** Several reads that must see one snapshot (a total and the page it describes). */
  async read<T>(work: () => Work<T>): Promise<T> {
    const sqlite = this.sqlite;
    if (sqlite) {
      const body = () =>
        sqlite.readTransaction(() => drive(work(), (s) => sqlite.run(sqlite.reader, s)));
      return sqlite.separateReader ? body() : sqlite.inTurn(body);
    }
    // REPEATABLE READ: every read of the work sees the same snapshot.
    return this.onPostgresRunner('REPEATABLE READ', work);
  }

  /** Statements that must land together (rows and what they imply), as one transaction. */
  write<T>(work: () => Work<T>): Promise<T> {
    const sqlite = this.sqlite;
    if (sqlite) {
      // Synchronous inside its transaction: nothing can interleave, and no await holds the lock.
      return sqlite.writeTransaction(() => drive(work(), (s) => sqlite.run(sqlite.writer, s)));
    }
    return this.onPostgresRunner(undefined, work);
  }

  /**
   * One statement, atomic by itself (e.g. UPDATE … RETURNING), answered once it is committed. On
   * SQLite, statements issued in the same turn of the event loop (concurrent requests) share one
   * commit, which costs far more than a one-row UPDATE (docs/benchmarks.md); on PostgreSQL each
   * commits on its own.
   */
  async execute(statement: Statement): Promise<StatementResult> {
    if (this.sqlite) return this.writes.submit(statement);
    return this.runOnPostgres(statement);
  }

  /**
   * Sets `changes` on the `entity` row whose primary key is `id` and answers the row as stored
   * after it (null when none has that key), in one statement (UPDATE … RETURNING) committed as
   * execute() commits. Only the columns given are written, so a concurrent update of other
   * columns is kept, and the answer is this update's result, not a later one's.
   *
   * On PostgreSQL the updates of one turn of the event loop (concurrent requests) that write the
   * same columns go as one statement (mergeUpdates()): without it, PUT company fell below 2.5x a
   * plain NestJS build there (docs/benchmarks.md). The answers are the same as one at a time.
   */
  update<T extends ObjectLiteral>(
    entity: EntityTarget<T>,
    id: unknown,
    changes: Partial<T>,
  ): Promise<T | null> {
    // The columns written: those `changes` gives a value (null included).
    const columns = this.dataSource
      .getMetadata(entity)
      .columns.filter((column) => column.getEntityValue(changes) !== undefined);
    if (columns.length === 0) {
      // A caller's mistake (an UPDATE without SET is not SQL), not the database's.
      return Promise.reject(new Error('Database.update() needs at least one column to set.'));
    }
    const update: Update = { id, changes, columns };
    if (this.sqlite) return this.updateOne(entity, update);
    let batcher = this.updates.get(entity);
    if (!batcher) {
      batcher = new TurnBatcher<Update, unknown>(MAX_MERGED_UPDATES, (items) =>
        this.mergeUpdates<ObjectLiteral>(entity, items),
      );
      this.updates.set(entity, batcher);
    }
    return batcher.submit(update) as Promise<T | null>;
  }

  private async updateOne<T extends ObjectLiteral>(
    entity: EntityTarget<T>,
    { id, changes, columns }: Update,
  ): Promise<T | null> {
    const { driver } = this.dataSource;
    const metadata = this.dataSource.getMetadata(entity);
    const parameters: ObjectLiteral = { id };
    const assignments = columns.map((column, i) => {
      parameters[`v${i}`] = driver.preparePersistentValue(column.getEntityValue(changes), column);
      return `${driver.escape(column.databaseName)} = :v${i}`;
    });
    const [key] = metadata.primaryColumns;
    const text = `UPDATE ${driver.escape(metadata.tableName)} SET ${assignments.join(', ')} WHERE ${driver.escape(key.databaseName)} = :id RETURNING ${this.columnsOf(entity)}`;
    const { rows } = await this.execute(this.sql(text, parameters));
    return this.hydrate(entity, rows)[0] ?? null;
  }

  /**
   * PostgreSQL: the updates of one turn, as few statements as keep their meaning. Those that
   * write the same columns of different rows go as one `UPDATE … FROM jsonb_populate_recordset()`
   * (the table's own row type gives every value its column's type); a second update of a row
   * waits for the first (the next round), as it would have come after it. A merged statement
   * that fails for another reason than an unreachable database is tried again one update at a
   * time, so that each gets its own answer.
   */
  private async mergeUpdates<T extends ObjectLiteral>(
    entity: EntityTarget<T>,
    items: Update[],
  ): Promise<Outcome<T | null>[]> {
    const outcomes: Outcome<T | null>[] = new Array(items.length);
    const settle = async (indexes: number[]): Promise<void> => {
      const updates = indexes.map((index) => items[index]);
      try {
        const values =
          updates.length === 1
            ? [await this.updateOne<T>(entity, updates[0])]
            : await this.updateMany<T>(entity, updates);
        indexes.forEach((index, i) => (outcomes[index] = { value: values[i] }));
      } catch (error) {
        if (indexes.length > 1 && !isDatabaseUnavailable(error)) {
          for (const index of indexes) await settle([index]);
        } else {
          for (const index of indexes) outcomes[index] = { error };
        }
      }
    };
    let waiting = items.map((_, index) => index);
    while (waiting.length > 0) {
      // Keys by text, as the database compares them ("5" and 5 are one row of an integer key).
      const round = new Map<string, number>();
      const later: number[] = [];
      for (const index of waiting) {
        const id = String(items[index].id);
        if (round.has(id)) later.push(index);
        else round.set(id, index);
      }
      const byColumns = new Map<string, number[]>();
      for (const index of round.values()) {
        const written = items[index].columns.map((column) => column.databaseName).join(',');
        byColumns.set(written, [...(byColumns.get(written) ?? []), index]);
      }
      await Promise.all([...byColumns.values()].map(settle));
      waiting = later;
    }
    return outcomes;
  }

  /** PostgreSQL: updates of different rows writing the same columns, as one statement. */
  private async updateMany<T extends ObjectLiteral>(
    entity: EntityTarget<T>,
    updates: Update[],
  ): Promise<(T | null)[]> {
    const { driver } = this.dataSource;
    const metadata = this.dataSource.getMetadata(entity);
    const [key] = metadata.primaryColumns;
    const written = updates[0].columns;
    // In key order, the order the rows are locked in: two merged statements over the same rows
    // then wait for each other instead of deadlocking.
    const rows = [...updates].sort(byId).map(({ id, changes }) => {
      const row: Row = { [key.databaseName]: id };
      for (const column of written) {
        row[column.databaseName] = driver.preparePersistentValue(
          column.getEntityValue(changes),
          column,
        ) as unknown;
      }
      return row;
    });
    const table = driver.escape(metadata.tableName);
    const keyName = driver.escape(key.databaseName);
    const assignments = written
      .map(
        (column) =>
          `${driver.escape(column.databaseName)} = v.${driver.escape(column.databaseName)}`,
      )
      .join(', ');
    const returning = metadata.columns
      .map((column) => `t.${driver.escape(column.databaseName)}`)
      .join(', ');
    const text = `UPDATE ${table} AS t SET ${assignments} FROM jsonb_populate_recordset(NULL::${table}, :rows) AS v WHERE t.${keyName} = v.${keyName} RETURNING ${returning}`;
    const result = await this.execute(this.sql(text, { rows: JSON.stringify(rows) }));
    const found = new Map<string, T>();
    // By text: a key given as "5" for an integer column comes back as 5.
    for (const row of this.hydrate(entity, result.rows))
      found.set(String(key.getEntityValue(row)), row);
    return updates.map(({ id }) => found.get(String(id)) ?? null);
  }

  /**
   * A write transaction through TypeORM's EntityManager, for work that awaits between statements
   * (webhook handlers). On SQLite it holds the writer until it ends; other writes wait their turn,
   * reads do not wait.
   */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (!this.sqlite) {
      return this.onPostgresTransaction((runner) => work(runner.manager));
    }
    return this.sqlite.writeTransaction(async () => {
      // TypeORM's one query runner for the writer; the transaction was begun by writeTransaction.
      const runner = this.dataSource.createQueryRunner('master');
      markTransaction(runner, true);
      try {
        return await work(runner.manager);
      } finally {
        markTransaction(runner, false);
      }
    });
  }

  /**
   * PostgreSQL: one statement in a transaction of its own, straight to the pool: no query runner
   * to create and release for it.
   */
  private runOnPostgres(statement: Statement): Promise<StatementResult> {
    return runNamed(postgresPoolOf(this.dataSource)!, statement, this.dataSource.logger);
  }

  /**
   * Connections in use, for the metrics: PostgreSQL's pool (total, idle, clients waiting for
   * one); SQLite's one writer.
   */
  connections(): { total: number; idle: number; waiting: number } {
    const pool = postgresPoolOf(this.dataSource);
    if (!pool) return { total: this.dataSource.isInitialized ? 1 : 0, idle: 0, waiting: 0 };
    return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
  }

  /**
   * Whether instances on other machines may share this database (PostgreSQL), rather than only
   * processes of one machine (a SQLite file).
   */
  get sharedAcrossMachines(): boolean {
    return !this.sqlite;
  }

  /**
   * Whether write transactions take turns on one connection (SQLite), so that work gathered into
   * one transaction saves commits; on PostgreSQL transactions run side by side on the pool.
   */
  get writesTakeTurns(): boolean {
    return this.sqlite !== undefined;
  }

  /** False unless SQLite writes have found the file locked by another process past the bound. */
  writesBlocked(): boolean {
    return this.sqlite?.writesBlocked() ?? false;
  }

  private commitTogether(statements: Statement[]): Promise<Outcome<StatementResult>[]> {
    const sqlite = this.sqlite!;
    return sqlite.writeTransaction(() =>
      statements.map((statement) => {
        try {
          return { value: sqlite.run(sqlite.writer, statement) };
        } catch (error) {
          // SQLite abandoned the transaction (I/O error, disk full…): the batch fails as one.
          if (!sqlite.writer.inTransaction) throw error;
          return { error };
        }
      }),
    );
  }

  private onPostgresRunner<T>(
    isolation: 'REPEATABLE READ' | undefined,
    work: () => Work<T>,
  ): Promise<T> {
    return this.onPostgresTransaction(async (runner) => {
      const steps = work();
      let step = steps.next();
      while (!step.done) step = steps.next(await runPostgres(runner, step.value));
      return step.value;
    }, isolation);
  }

  /**
   * PostgreSQL: `work` in a transaction on a connection of its own. When the database does not
   * answer, the connection is closed rather than sent a ROLLBACK, which would wait out the
   * statement timeout a second time (past the contract's 503 within 5 s); closing it ends the
   * transaction just the same.
   */
  private async onPostgresTransaction<T>(
    work: (runner: QueryRunner) => Promise<T>,
    isolation?: 'REPEATABLE READ',
  ): Promise<T> {
    const runner = this.dataSource.createQueryRunner('master');
    let broken: unknown;
    try {
      await runner.startTransaction(isolation);
      const result = await work(runner);
      await runner.commitTransaction();
      return result;
    } catch (error) {
      if (isDatabaseUnavailable(error)) broken = error;
      else if (runner.isTransactionActive) {
        await runner.rollbackTransaction().catch(() => undefined);
      }
      throw error;
    } finally {
      if (broken) await releaseBroken(runner, broken);
      else await runner.release();
    }
  }
}

/** One update(): the row's key, its changes, and the columns they write. */
interface Update {
  id: unknown;
  changes: ObjectLiteral;
  columns: ColumnMetadata[];
}

/** Updates merged into one statement at most (the JSON parameter stays small). */
const MAX_MERGED_UPDATES = 100;

function byId(a: Update, b: Update): number {
  return a.id === b.id ? 0 : (a.id as number | string) < (b.id as number | string) ? -1 : 1;
}

function drive<T>(steps: Work<T>, run: (statement: Statement) => StatementResult): T {
  let step = steps.next();
  while (!step.done) step = steps.next(run(step.value));
  return step.value;
}

/**
 * PostgreSQL: one statement on `runner`'s connection, inside its transaction. A text that repeats
 * goes to pg as a named statement, as in runOnPostgres(): the server parses and plans it once per
 * connection instead of on every call (a grouped webhook delivery's INSERTs: docs/benchmarks.md).
 */
async function runPostgres(
  runner: QueryRunner,
  { sql, params, prepared }: Statement,
): Promise<StatementResult> {
  const client = prepared ? postgresClientOf(runner) : undefined;
  if (client) return runNamed(client, { sql, params, prepared }, runner.connection.logger, runner);
  const result = await runner.query(sql, params, true);
  return { rows: result.records ?? [], affected: result.affected ?? 0 };
}

/**
 * A statement on `connection` (the pool, or one connection holding a transaction), logged as
 * TypeORM logs its own queries; one with a `prepared` name as a pg named statement.
 */
async function runNamed(
  connection: Pool | PoolClient,
  { sql, params, prepared }: Statement,
  logger: Logger,
  runner?: QueryRunner,
): Promise<StatementResult> {
  logger.logQuery(sql, params, runner);
  const result = await connection.query({ name: prepared, text: sql, values: params });
  return { rows: result.rows as Row[], affected: result.rowCount ?? 0 };
}
