import type { Database as SqliteConnection, Statement as SqliteStatement } from 'better-sqlite3';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { SqliteCheckpointer, WRITER_AUTOCHECKPOINT_PAGES } from './sqlite-checkpointer.js';
import type { Statement, StatementResult } from './statement.js';
import { bindIntegers, routeReads, sqliteConnectionOf } from './typeorm-internals.js';

/** A write could not get SQLite's lock within the configured bound (answered 503). */
class WriteLockTimeoutError extends Error {
  override readonly name = 'WriteLockTimeoutError';
  /** Recognised by isDatabaseUnavailable(), like the driver's own busy codes. */
  readonly code = 'SQLITE_BUSY_TIMEOUT';

  constructor(waitedMs: number) {
    super(`The SQLite database stayed locked by another process for ${waitedMs} ms.`);
  }
}

/**
 * How long a reader may wait, synchronously, on a lock: in WAL mode readers take none that a
 * writer holds, so this only covers a checkpoint or recovery by another process.
 */
const READER_BUSY_TIMEOUT_MS = 5;
/**
 * Attempts to take the write lock held by another process: every millisecond for the first
 * LOCK_POLL_MS (a retention batch or a CLI write holds it for a few ms: waking late costs intake
 * more than a failed attempt costs CPU), then with back-off doubling up to
 * MAX_LOCK_RETRY_DELAY_MS.
 */
const LOCK_POLL_MS = 25;
const MAX_LOCK_RETRY_DELAY_MS = 50;
const STATEMENT_CACHE_SIZE = 256;

/** Each open writer DataSource's connections, for data-layer code that holds only an EntityManager. */
const openConnections = new WeakMap<DataSource, SqliteConnections>();

/** The SqliteConnections of `dataSource`'s writer, or undefined (PostgreSQL, or not opened). */
export function sqliteConnectionsOf(dataSource: DataSource): SqliteConnections | undefined {
  return openConnections.get(dataSource);
}

/**
 * SQLite's connections, and the rules that make them safe under concurrent requests:
 *
 * - One writer (TypeORM's own connection) used by one write transaction at a time: writes take
 *   turns, so a transaction whose work awaits (a webhook handler) never has another request's
 *   statements land inside it.
 * - One read-only reader in WAL mode for everything else: each read sees the last committed
 *   snapshot, never a write in progress, and never waits for the writer. One is enough: a
 *   better-sqlite3 call blocks the thread, so a second connection on the same thread would add
 *   no parallelism.
 * - The writer's busy timeout is 0: SQLite's busy wait is a sleep on the main thread, which would
 *   stall every request while another process holds the lock. A locked database is instead
 *   retried asynchronously with back-off, up to the configured bound.
 *
 * `sqlite::memory:` is one database per connection, so there the writer also reads: reads
 * through Database take a turn, reads through TypeORM repositories do not.
 */
export class SqliteConnections {
  private current: SqliteConnection;
  private readonly readerConnection?: SqliteConnection;
  private turns: Promise<unknown> = Promise.resolve();
  private readonly statements = new WeakMap<SqliteConnection, Map<string, SqliteStatement>>();
  /** Since when writes have found the database locked by another process. */
  private blockedSince?: number;

  private constructor(
    private readonly dataSource: DataSource,
    private readonly readerSource: DataSource | undefined,
    private readonly lockTimeoutMs: number,
    private readonly checkpointer: SqliteCheckpointer | undefined,
  ) {
    this.current = sqliteConnectionOf(dataSource)!;
    this.readerConnection = readerSource && sqliteConnectionOf(readerSource);
  }

  /**
   * TypeORM's connection, looked up on each use: a DataSource closed and initialised again (as
   * tests do) has a new one, which gets the busy timeout of 0 too.
   */
  get writer(): SqliteConnection {
    const connection = sqliteConnectionOf(this.dataSource)!;
    if (connection !== this.current) {
      this.current = connection;
      if (connection.open) configureWriter(connection);
    }
    return connection;
  }

  get reader(): SqliteConnection {
    return this.readerConnection ?? this.writer;
  }

  /** Opens the reader beside `dataSource`'s writer (after its migrations ran). */
  static async open(dataSource: DataSource, lockTimeoutMs: number): Promise<SqliteConnections> {
    const writer = sqliteConnectionOf(dataSource)!;
    let readerSource: DataSource | undefined;
    let checkpointer: SqliteCheckpointer | undefined;
    if (!writer.memory) {
      readerSource = new DataSource({
        ...(dataSource.options as Extract<typeof dataSource.options, { type: 'better-sqlite3' }>),
        readonly: true,
        migrationsRun: false,
        timeout: READER_BUSY_TIMEOUT_MS,
        prepareDatabase: undefined,
        // One log of every statement, whichever connection ran it.
        logger: dataSource.logger,
      });
      await readerSource.initialize();
      bindIntegers(readerSource);
      routeReads(dataSource, readerSource);
      checkpointer = SqliteCheckpointer.start(writer.name);
    }
    bindIntegers(dataSource);
    configureWriter(writer);
    const connections = new SqliteConnections(
      dataSource,
      readerSource,
      lockTimeoutMs,
      checkpointer,
    );
    openConnections.set(dataSource, connections);
    return connections;
  }

  get separateReader(): boolean {
    return this.readerConnection !== undefined;
  }

  async close(): Promise<void> {
    openConnections.delete(this.dataSource);
    await this.turns;
    await this.checkpointer?.stop();
    await this.readerSource?.destroy();
  }

  /** Runs `work` when no other work holds the writer. */
  inTurn<T>(work: () => T | Promise<T>): Promise<T> {
    const run = this.turns.then(work);
    this.turns = run.catch(() => undefined);
    return run;
  }

  /**
   * Runs `body` in a write transaction of its own on the writer, in its turn: BEGIN IMMEDIATE
   * (the write lock up front, so no upgrade can fail half-way), then COMMIT, or ROLLBACK if the
   * body throws. Fails with WriteLockTimeoutError if the lock is not free `lockTimeoutMs` after
   * this call (time spent waiting for the turn included).
   */
  writeTransaction<T>(body: () => T | Promise<T>): Promise<T> {
    const deadline = Date.now() + this.lockTimeoutMs;
    return this.inTurn(async () => {
      const locking = this.begin(deadline);
      if (locking) await locking;
      try {
        const result = await body();
        this.run(this.writer, COMMIT);
        return result;
      } catch (error) {
        if (this.writer.inTransaction) this.run(this.writer, ROLLBACK);
        throw error;
      }
    });
  }

  /** Several reads in one snapshot (a deferred transaction on the reader; synchronous). */
  readTransaction<T>(body: () => T): T {
    this.run(this.reader, BEGIN);
    try {
      return body();
    } finally {
      if (this.reader.inTransaction) this.run(this.reader, COMMIT);
    }
  }

  /**
   * Whether writes have found the database locked for longer than the bound. Checked again on
   * the spot (a lock taken and given back at once), so that it turns false as soon as the other
   * process lets go even if no write came since.
   */
  writesBlocked(): boolean {
    if (this.blockedSince === undefined) return false;
    if (Date.now() - this.blockedSince < this.lockTimeoutMs) return false;
    if (this.writer.inTransaction) return false; // ours: the lock was free
    if (!this.tryBegin()) return true;
    this.run(this.writer, ROLLBACK);
    return false;
  }

  /** One statement on `connection`, prepared once per connection. */
  run(connection: SqliteConnection, { sql, params }: Statement): StatementResult {
    // Logged like TypeORM's own queries, so `logging` shows these statements too.
    this.dataSource.logger.logQuery(sql, params);
    const bound = params.map(bindable);
    const prepared = this.prepare(connection, sql);
    if (prepared.reader) {
      const rows = prepared.all(...bound) as Record<string, unknown>[];
      return { rows, affected: rows.length };
    }
    return { rows: [], affected: prepared.run(...bound).changes };
  }

  /** BEGIN IMMEDIATE at once if the lock is free; otherwise a promise of it, retried with back-off. */
  private begin(deadline: number): Promise<void> | undefined {
    return this.tryBegin() ? undefined : this.waitForLock(deadline);
  }

  private async waitForLock(deadline: number): Promise<void> {
    const started = Date.now();
    this.blockedSince ??= started;
    for (let delay = 1; ;) {
      const left = deadline - Date.now();
      if (left <= 0) throw new WriteLockTimeoutError(Date.now() - started);
      await sleep(Math.min(delay, left));
      if (this.tryBegin()) return;
      if (Date.now() - started >= LOCK_POLL_MS)
        delay = Math.min(delay * 2, MAX_LOCK_RETRY_DELAY_MS);
    }
  }

  private tryBegin(): boolean {
    try {
      this.run(this.writer, BEGIN_IMMEDIATE);
    } catch (error) {
      if (!isBusy(error)) throw error;
      return false;
    }
    this.blockedSince = undefined;
    return true;
  }

  private prepare(connection: SqliteConnection, sql: string): SqliteStatement {
    let cache = this.statements.get(connection);
    if (!cache) this.statements.set(connection, (cache = new Map()));
    let prepared = cache.get(sql);
    if (!prepared) {
      prepared = connection.prepare(sql);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(sql, prepared);
    }
    return prepared;
  }
}

/**
 * The writer's settings: no synchronous busy wait (see above). Temporary storage stays SQLite's
 * default (a file): a statement whose triggers write other tables keeps a statement journal,
 * which SQLite then holds in one 64 KiB buffer, spilled to a file only past that size; with
 * `temp_store = MEMORY` it is kept in 1 KiB pieces instead, several allocations per page, which
 * cost a webhook delivery about 15 % of its SQLite instructions (docs/benchmarks.md). A delivery's
 * statement touches about a dozen pages, under the spill size unless page splits add more.
 */
function configureWriter(connection: SqliteConnection): void {
  connection.pragma('busy_timeout = 0');
  // The checkpoints run on a worker (SqliteCheckpointer); the writer's own are the backstop.
  connection.pragma(`wal_autocheckpoint = ${WRITER_AUTOCHECKPOINT_PAGES}`);
}

const BEGIN: Statement = { sql: 'BEGIN', params: [] };
const BEGIN_IMMEDIATE: Statement = { sql: 'BEGIN IMMEDIATE', params: [] };
const COMMIT: Statement = { sql: 'COMMIT', params: [] };
const ROLLBACK: Statement = { sql: 'ROLLBACK', params: [] };
// Named apart from TypeORM's own (typeorm_1…), which a handler's manager.transaction() nests inside.

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
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
