import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import pg from 'pg';
import type { DataSourceOptions } from 'typeorm';
import { registeredFeatures } from './features.js';

/** DATABASE_URL and the settings buildDataSourceOptions() applies with it. */
interface DatabaseSettings {
  url: string;
  poolSize?: number;
  migrationsRun?: boolean;
  /**
   * PostgreSQL: the longest one statement may take (server and client side), 0 for no limit.
   * Default: short enough that a stalled database is a 503 within 5 s (CONTRACT §2).
   */
  statementTimeoutMs?: number;
}

/**
 * A request waits at most this for a connection, then at most STATEMENT_TIMEOUT_MS for its
 * statement: a database that stopped answering (not refusing) gives a 503 within 5 s.
 */
const CONNECT_TIMEOUT_MS = 1500;
const STATEMENT_TIMEOUT_MS = 3000;

const SQLITE_BUSY_TIMEOUT_MS = 5000;

/**
 * The one place that turns DATABASE_URL into TypeORM options. Used by the app
 * (TypeOrmModule.forRootAsync), the CLI (db:status) and the TypeORM CLI (ormconfig.ts).
 */
export function buildDataSourceOptions(settings: DatabaseSettings): DataSourceOptions {
  const { entities, migrations } = registeredFeatures();
  const common = {
    entities,
    migrations,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each' as const,
    migrationsRun: settings.migrationsRun ?? false,
    synchronize: false,
    logging: false,
  };

  if (/^postgres(ql)?:\/\//.test(settings.url)) {
    timestampsInUtc();
    const statementTimeout = settings.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS;
    return {
      ...common,
      type: 'postgres',
      url: settings.url,
      connectTimeoutMS: CONNECT_TIMEOUT_MS,
      extra: {
        max: settings.poolSize ?? 10,
        // Covers both a new connection and the wait for a free one in the pool.
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
        idleTimeoutMillis: 30000,
        // A statement that cannot finish fails instead of hanging: statement_timeout for a slow
        // one (lock pile-up), query_timeout (client side) for a connection that went silent.
        // The server gives up first: its refusal (57014) means the statement did nothing, where
        // the client's leaves it unknown (a prune's DELETE that finished as the client gave up
        // went uncounted).
        query_timeout: statementTimeout || undefined,
        statement_timeout: Math.round(statementTimeout * 0.9),
        idle_in_transaction_session_timeout: 15000,
      },
    };
  }

  const file = sqliteFile(settings.url);
  const database = file ?? ':memory:';
  if (file) makeFolders(dirname(file));
  return {
    ...common,
    type: 'better-sqlite3',
    database,
    timeout: SQLITE_BUSY_TIMEOUT_MS,
    prepareDatabase: (db: { pragma(sql: string): unknown }) => {
      if (database !== ':memory:') db.pragma('journal_mode = WAL');
      // WAL + NORMAL: a committed transaction survives a crash of the process (the WAL is in the
      // OS cache); only an OS crash or power loss can drop the last commits.
      db.pragma('synchronous = NORMAL');
      db.pragma('foreign_keys = ON');
      db.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    },
  };
}

/**
 * `folder` and the folders above it that are missing, one level at a time: Node's recursive
 * mkdirSync() spins forever where a folder cannot be made and reports ENOENT (under /proc).
 */
function makeFolders(folder: string) {
  const missing: string[] = [];
  for (let at = folder; !existsSync(at); at = dirname(at)) {
    missing.push(at);
    if (dirname(at) === at) break;
  }
  for (const each of missing.reverse()) {
    try {
      mkdirSync(each);
    } catch (error) {
      // Made meanwhile by another process starting on the same file.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

const PLAIN_TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?$/;

/**
 * `timestamp` (without time zone) columns hold UTC on PostgreSQL, as SQLite's do, whatever the
 * TZ of the process that writes or reads them. `pg` writes a Date in the process's local time
 * (PostgreSQL drops the offset it sends for such a column) and reads one back as local time:
 * instances or a CLI in different time zones would disagree by hours, and so would retention.
 * The settings are the driver's own, for the whole process.
 */
function timestampsInUtc() {
  pg.defaults.parseInputDatesAsUTC = true;
  const withZone = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text');
  pg.types.setTypeParser(pg.types.builtins.TIMESTAMP, 'text', (text: string) =>
    // 'infinity' and BC dates as the driver reads them.
    withZone(PLAIN_TIMESTAMP.test(text) ? `${text}+00` : text),
  );
}

/**
 * The SQLite file a `sqlite:` DATABASE_URL names, as an absolute path; undefined for
 * `sqlite::memory:` (no file) and for PostgreSQL.
 */
export function sqliteFile(url: string): string | undefined {
  if (!url.startsWith('sqlite:')) return undefined;
  const path = url.slice('sqlite:'.length);
  return path === ':memory:' ? undefined : resolve(path);
}

/** DATABASE_URL as it may be logged: a PostgreSQL password removed, a SQLite path made absolute. */
export function databaseForLog(url: string): string {
  if (url.startsWith('sqlite:')) {
    const file = sqliteFile(url);
    return file ? `sqlite:${file}` : url;
  }
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString();
  } catch {
    // Unparsable URLs never get this far (validated at start); say nothing rather than leak one.
    return 'postgres';
  }
}
