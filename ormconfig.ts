import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DataSource, DataSourceOptions } from 'typeorm';
import { DEFAULT_DATABASE_URL } from './src/config/environment.js';
import { registeredFeatures } from './src/database/features.js';

export interface DatabaseSettings {
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
 * (TypeOrmModule.forRootAsync), the CLI and the TypeORM CLI (the default export below).
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
        query_timeout: statementTimeout || undefined,
        statement_timeout: statementTimeout,
        idle_in_transaction_session_timeout: 15000,
      },
    };
  }

  const path = settings.url.replace(/^sqlite:/, '');
  const database = path === ':memory:' ? ':memory:' : resolve(path);
  if (database !== ':memory:') mkdirSync(dirname(database), { recursive: true });
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
 * The TypeORM CLI's (`npm run migration:run`, the drift check): no statement limit, so that a long
 * data migration can be run by hand before the servers start (they apply pending migrations under
 * the limit). AppModule is loaded first, so that every module's DatabaseModule.forFeature()
 * registration is seen. The CLI awaits this export; nothing is loaded until it does (importing
 * this file for buildDataSourceOptions() loads no app).
 */
export default {
  then<T>(resolve: (dataSource: DataSource) => T, reject: (error: unknown) => T) {
    return import('./src/app.module.js')
      .then(
        () =>
          new DataSource(
            buildDataSourceOptions({
              url: process.env.DATABASE_URL || DEFAULT_DATABASE_URL,
              statementTimeoutMs: 0,
            }),
          ),
      )
      .then(resolve, reject);
  },
};
