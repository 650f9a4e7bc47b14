import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DataSource, DataSourceOptions } from 'typeorm';
import { DEFAULT_DATABASE_URL } from './src/config/environment.js';
import { entities } from './src/database/entities.js';
import { migrations } from './src/database/migrations.js';

export interface DatabaseSettings {
  url: string;
  poolSize?: number;
  migrationsRun?: boolean;
}

const SQLITE_BUSY_TIMEOUT_MS = 5000;

/**
 * The one place that turns DATABASE_URL into TypeORM options. Used by the app
 * (TypeOrmModule.forRootAsync), the CLI and the TypeORM CLI (the default export below).
 */
export function buildDataSourceOptions(settings: DatabaseSettings): DataSourceOptions {
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
    return {
      ...common,
      type: 'postgres',
      url: settings.url,
      connectTimeoutMS: 3000,
      extra: {
        max: settings.poolSize ?? 10,
        connectionTimeoutMillis: 3000,
        idleTimeoutMillis: 30000,
        // A statement that cannot finish (lost connection, lock pile-up) fails instead of hanging.
        query_timeout: 10000,
        statement_timeout: 10000,
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

export default new DataSource(
  buildDataSourceOptions({ url: process.env.DATABASE_URL || DEFAULT_DATABASE_URL }),
);
