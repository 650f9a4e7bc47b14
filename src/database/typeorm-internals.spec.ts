import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import {
  bindIntegers,
  markTransaction,
  postgresClientOf,
  postgresPoolOf,
  releaseBroken,
  routeReads,
  sqliteConnectionOf,
} from './typeorm-internals.js';

/**
 * Pins every TypeORM internal the service relies on (typeorm-internals.ts), against real
 * connections: if an upgrade renames a driver field or changes how reads pick their runner, this
 * fails here rather than in production.
 */
describe('TypeORM internals', () => {
  const file = join(tmpdir(), `typeorm-internals-${process.pid}.sqlite`);
  let writer: DataSource;
  let reader: DataSource;

  beforeAll(async () => {
    writer = new DataSource({ type: 'better-sqlite3', database: file });
    await writer.initialize();
    sqliteConnectionOf(writer)!.pragma('journal_mode = WAL');
    await writer.query('CREATE TABLE items (name TEXT NOT NULL)');
    reader = new DataSource({ type: 'better-sqlite3', database: file, readonly: true });
    await reader.initialize();
  });

  afterAll(async () => {
    await reader.destroy();
    await writer.destroy();
    for (const ext of ['', '-wal', '-shm']) rmSync(file + ext, { force: true });
  });

  const names = (source: DataSource) =>
    source
      .createQueryBuilder()
      .select('name')
      .from('items', 'i')
      .orderBy('name')
      .getRawMany<{ name: string }>();

  it("finds better-sqlite3's connection: the one TypeORM's queries run on", async () => {
    const connection = sqliteConnectionOf(writer)!;
    expect(connection.open).toBe(true);
    expect(connection.readonly).toBe(false);
    connection.exec('BEGIN');
    try {
      await writer.query(`INSERT INTO items (name) VALUES ('shared')`);
      expect(connection.prepare('SELECT COUNT(*) AS n FROM items').get()).toEqual({ n: 1 });
    } finally {
      connection.exec('ROLLBACK');
    }
    expect(sqliteConnectionOf(reader)!.readonly).toBe(true);
    expect(postgresPoolOf(writer)).toBeUndefined();
    expect(postgresClientOf(writer.createQueryRunner('master'))).toBeUndefined();
  });

  it('sends query-builder reads to the reader, everything else to the writer', async () => {
    const writerConnection = sqliteConnectionOf(writer)!;
    await writer.query(`INSERT INTO items (name) VALUES ('committed')`);
    routeReads(writer, reader);
    writerConnection.exec('BEGIN');
    try {
      await writer.query(`INSERT INTO items (name) VALUES ('uncommitted')`);
      expect(await names(writer)).toEqual([{ name: 'committed' }]);
      expect(await writer.query('SELECT name FROM items ORDER BY name')).toEqual([
        { name: 'committed' },
        { name: 'uncommitted' },
      ]);
      // Inside a transaction the reads stay on the transaction's runner.
      const runner = writer.createQueryRunner('master');
      expect(
        await runner.manager
          .createQueryBuilder()
          .select('name')
          .from('items', 'i')
          .orderBy('name')
          .getRawMany(),
      ).toHaveLength(2);
    } finally {
      writerConnection.exec('ROLLBACK');
    }
  });

  it('lets a runner work inside a transaction begun outside TypeORM (savepoints)', async () => {
    const connection = sqliteConnectionOf(writer)!;
    const runner = writer.createQueryRunner('master');
    connection.exec('BEGIN IMMEDIATE');
    markTransaction(runner, true);
    try {
      expect(runner.isTransactionActive).toBe(true);
      await runner.manager.transaction(async (m) => {
        await m.query(`INSERT INTO items (name) VALUES ('kept')`);
      });
      await runner.manager
        .transaction(async (m) => {
          await m.query(`INSERT INTO items (name) VALUES ('undone')`);
          throw new Error('undo this one');
        })
        .catch(() => undefined);
      expect(connection.inTransaction).toBe(true); // savepoints only: still ours to end
    } finally {
      markTransaction(runner, false);
    }
    connection.exec('COMMIT');
    expect(runner.isTransactionActive).toBe(false);
    // And TypeORM's own transactions work as before afterwards.
    await writer.transaction((m) => m.query(`INSERT INTO items (name) VALUES ('later')`));
    expect((await names(writer)).map((r) => r.name)).toEqual(['committed', 'kept', 'later']);
  });

  it('binds the integers of query-builder statements on SQLite: one text whatever the numbers', async () => {
    const source = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
    await source.initialize();
    try {
      await source.query('CREATE TABLE counted (n INTEGER NOT NULL, label TEXT NOT NULL)');
      const insert = (n: number, label: unknown) =>
        source
          .createQueryBuilder()
          .insert()
          .into('counted')
          .values({ n, label })
          .getQueryAndParameters();
      // TypeORM alone writes numbers into the text: a new statement for every value.
      expect(insert(1, 'a')[0]).not.toEqual(insert(2, 'a')[0]);
      bindIntegers(source);
      const [first, firstParameters] = insert(1, 7);
      expect(insert(2, 8)[0]).toEqual(first);
      expect(firstParameters).toEqual([1n, 7n]);
      // Bound as INTEGER (not REAL), as the literal was: 7 in a text column reads '7', not '7.0'.
      await source
        .createQueryBuilder()
        .insert()
        .into('counted')
        .values({ n: 3, label: 7 })
        .execute();
      expect(await source.query('SELECT n, typeof(n) AS type, label FROM counted')).toEqual([
        { n: 3, type: 'integer', label: '7' },
      ]);
      // A number that is not an integer is written as TypeORM writes it.
      expect(source.driver.escapeQueryWithParameters('SELECT :x AS x', { x: 1.5 })).toEqual([
        'SELECT 1.5 AS x',
        [],
      ]);
    } finally {
      await source.destroy();
    }
  });

  const postgresUrl = process.env.TEST_DATABASE_URL;
  (postgresUrl ? it : it.skip)("finds pg's pool behind a PostgreSQL data source", async () => {
    const source = new DataSource({ type: 'postgres', url: postgresUrl });
    await source.initialize();
    try {
      const pool = postgresPoolOf(source)!;
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      expect(sqliteConnectionOf(source)).toBeUndefined();
    } finally {
      await source.destroy();
    }
  });

  (postgresUrl ? it : it.skip)(
    "finds the pg connection a PostgreSQL query runner holds, inside the runner's transaction",
    async () => {
      const source = new DataSource({ type: 'postgres', url: postgresUrl });
      await source.initialize();
      const runner = source.createQueryRunner('master');
      try {
        expect(postgresClientOf(runner)).toBeUndefined(); // not connected yet
        await runner.startTransaction();
        await runner.query('CREATE TEMPORARY TABLE held (n integer)');
        const client = postgresClientOf(runner)!;
        await client.query({
          name: 'held_insert',
          text: 'INSERT INTO held VALUES ($1)',
          values: [7],
        });
        const transaction = 'SELECT txid_current()::text AS id';
        expect((await client.query(transaction)).rows).toEqual(await runner.query(transaction));
        expect(await runner.query('SELECT n FROM held')).toEqual([{ n: 7 }]);
        await runner.rollbackTransaction();
      } finally {
        await runner.release();
        await source.destroy();
      }
    },
  );

  (postgresUrl ? it : it.skip)(
    'closes a broken connection instead of returning it to the pool, ending its transaction',
    async () => {
      const source = new DataSource({ type: 'postgres', url: postgresUrl, extra: { max: 1 } });
      await source.initialize();
      try {
        const broken = source.createQueryRunner('master');
        await broken.startTransaction();
        const [{ pid }] = (await broken.query('SELECT pg_backend_pid() AS pid')) as {
          pid: number;
        }[];
        await releaseBroken(broken, new Error('the database does not answer'));
        expect(broken.isReleased).toBe(true);

        const next = source.createQueryRunner('master');
        try {
          const backendOf = async () =>
            ((await next.query('SELECT pg_backend_pid() AS pid')) as { pid: number }[])[0].pid;
          expect(await backendOf()).not.toBe(pid);
          // Its backend goes away (and with it the transaction): polled, it ends asynchronously.
          const alive = async () =>
            Number(
              (
                (await next.query('SELECT count(*) AS n FROM pg_stat_activity WHERE pid = $1', [
                  pid,
                ])) as { n: string }[]
              )[0].n,
            );
          for (let i = 0; i < 100 && (await alive()) > 0; i++) {
            await new Promise((next) => setTimeout(next, 20));
          }
          expect(await alive()).toBe(0);
        } finally {
          await next.release();
        }
      } finally {
        await source.destroy();
      }
    },
  );
});
