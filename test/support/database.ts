import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, migrations } from '../../src/database/index.js';

export interface TestDatabase {
  url: string;
  kind: 'sqlite' | 'postgres';
  drop(): Promise<void>;
}

export const usingPostgres = () => !!process.env.TEST_DATABASE_URL;

/**
 * A fresh, empty database for one test file: a new PostgreSQL database next to
 * TEST_DATABASE_URL's (whose name must contain "test"), or a new SQLite file.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const suffix = `${process.pid}_${randomBytes(4).toString('hex')}`;
  const base = process.env.TEST_DATABASE_URL;
  if (!base) {
    const file = join(tmpdir(), `company-api-test-${suffix}.sqlite`);
    // Made, empty, as PostgreSQL's is: the CLI notes a database it has to make (a mistyped path).
    writeFileSync(file, '');
    return {
      url: `sqlite:${file}`,
      kind: 'sqlite',
      drop: async () => {
        for (const ext of ['', '-wal', '-shm']) rmSync(file + ext, { force: true });
      },
    };
  }

  const baseUrl = new URL(base);
  const baseName = decodeURIComponent(baseUrl.pathname.slice(1));
  if (!/test/i.test(baseName)) {
    throw new Error(`Refusing TEST_DATABASE_URL: database "${baseName}" does not contain "test".`);
  }
  const name = `${baseName}_${suffix}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  await adminQuery(base, `CREATE DATABASE "${name}"`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    kind: 'postgres',
    drop: () => adminQuery(base, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

async function adminQuery(connectionString: string, sql: string) {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** The core migrations that come before the one named `name` (a name not there is an error). */
export function migrationsBefore(name: string) {
  const index = migrations.findIndex((migration) => migration.name === name);
  if (index === -1) throw new Error(`No migration named ${name}`);
  return migrations.slice(0, index);
}

/**
 * A DataSource on `database` with the core migrations run up to the one named `before` (all of
 * them without it): to leave rows in an older schema, then migrate them. Destroy it when done.
 */
export async function migratedTo(database: TestDatabase, before?: string): Promise<DataSource> {
  const db = new DataSource({
    ...buildDataSourceOptions({ url: database.url }),
    migrations: before === undefined ? migrations : migrationsBefore(before),
  });
  await db.initialize();
  await db.runMigrations();
  return db;
}
