import Sqlite from 'better-sqlite3';
import request from 'supertest';
import { Column, DataSource, Entity, type EntityManager, PrimaryColumn } from 'typeorm';
import { Database } from '../../src/database/database.js';
import { Counter } from '../../src/database/counter.entity.js';
import { insertUnlessConflict } from '../../src/database/insert-unless-conflict.js';
import {
  batchedWrites,
  insertWithDependents,
  rowInsert,
  WRITE_BATCHES_IN_FLIGHT,
} from '../../src/database/insert-with-dependents.js';
import { FLIGHT_WAIT_MS, FlightBound } from '../../src/database/flight-bound.js';
import { type Outcome, TurnBatcher } from '../../src/database/turn-batch.js';
import { CompletedAttempt } from '../../src/learning/completed-attempt.entity.js';
import { startTestApp, TestApp } from '../support/app.js';
import { createTestDatabase, usingPostgres } from '../support/database.js';
import { errors } from '../support/responses.js';

enum Mood {
  Calm = 'calm',
  Busy = 'busy',
}

/** A first row and a dependent whose columns PostgreSQL types beyond the driver's type names. */
@Entity({ name: 'cast_firsts' })
class CastFirst {
  @PrimaryColumn({ type: 'varchar' })
  name: string;
}

@Entity({ name: 'cast_dependents' })
class CastDependent {
  @PrimaryColumn({ name: 'first_name', type: 'varchar' })
  firstName: string;

  @Column({ type: 'enum', enum: Mood })
  mood: Mood;

  @Column({ type: 'enum', enum: Mood, enumName: 'cast_moods', array: true })
  moods: Mood[];

  @Column({ type: 'integer', array: true })
  counts: number[];
}

const turn = () => new Promise<void>((next) => setImmediate(next));

/** For a step that needs no statement to finish: a few turns of the event loop. */
async function turnsUntil(condition: () => boolean) {
  for (let i = 0; i < 100 && !condition(); i++) await turn();
  expect(condition()).toBe(true);
}

/** For a step that waits on a real statement or a timer: polled for up to 5 s. */
async function until(condition: () => boolean) {
  for (let waited = 0; !condition() && waited < 5000; waited += 5) {
    await new Promise((next) => setTimeout(next, 5));
  }
  expect(condition()).toBe(true);
}

describe('database, migrations and health', () => {
  let t: TestApp;
  let db: Database;
  beforeAll(async () => {
    t = await startTestApp();
    db = t.app.get(Database);
  });
  afterAll(async () => {
    await t.close();
  });
  const names = async (prefix: string) =>
    (
      (await t.db.query(
        `SELECT name FROM counters WHERE name LIKE '${prefix}%' ORDER BY name`,
      )) as { name: string }[]
    ).map((r) => r.name);

  it('applied every migration on start', async () => {
    const rows: { name: string }[] = await t.db.query('SELECT name FROM migrations ORDER BY id');
    expect(rows.map((r) => r.name)).toEqual(t.db.migrations.map((m) => m.name));
    expect(await t.db.showMigrations()).toBe(false);
  });

  it('has no drift between entities and migrations', async () => {
    const sql = await t.db.driver.createSchemaBuilder().log();
    expect(sql.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('migrates down and up again cleanly', async () => {
    for (let i = 0; i < t.db.migrations.length; i++) await t.db.undoLastMigration();
    expect(await t.db.showMigrations()).toBe(true);
    await t.db.runMigrations();
    expect(await t.db.showMigrations()).toBe(false);
  });

  it('binds statement parameters by name, the same text with new values each time', async () => {
    // The text is translated once; integers are bound as integers (better-sqlite3 would bind a
    // JS number as a REAL, and 7 cast to text would read '7.0').
    for (const [n, word] of [
      [7, 'seven'],
      [123456789, 'big'],
    ] as const) {
      const rows = await db.select(
        db.sql('SELECT :word AS word, CAST(:n AS VARCHAR(20)) AS n, :m + 1 AS next', {
          n,
          m: n,
          word,
        }),
      );
      expect(rows).toEqual([{ n: String(n), word, next: n + 1 }]);
    }
    const at = new Date('2026-01-02T03:04:05.678Z');
    const stored = await db.execute(db.sql('SELECT CAST(:at AS VARCHAR(40)) AS at', { at }));
    expect(String(stored.rows[0].at)).toMatch(/^2026-01-02[ T]0?\d:04:05/);
  });

  it('commits writes issued together, each answered on its own, a failing one alone', async () => {
    const insert = (n: string) =>
      db.sql('INSERT INTO counters (name, value) VALUES (:n, 1)', { n });
    await db.execute(insert('group-c'));
    await db.execute(insert('group-d'));
    // Issued in the same tick: on SQLite they share one commit (group commit).
    const outcomes = await Promise.allSettled([
      db.execute(insert('group-a')),
      db.execute(insert('group-d')), // the primary key refuses this one only
      db.execute(db.sql('UPDATE counters SET value = value + 1 WHERE name = :n', { n: 'group-c' })),
      db.execute(insert('group-b')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect(outcomes[2]).toEqual({ status: 'fulfilled', value: { rows: [], affected: 1 } });
    const rows = await t.db.query(
      `SELECT name, value FROM counters WHERE name LIKE 'group-%' ORDER BY name`,
    );
    expect(rows.map((r: { name: string; value: unknown }) => [r.name, Number(r.value)])).toEqual([
      ['group-a', 1],
      ['group-b', 1],
      ['group-c', 2],
      ['group-d', 1],
    ]);
  });

  describe('transactions started together (groupedTransaction)', () => {
    const onSqlite = () => t.db.options.type === 'better-sqlite3';
    const insert = (manager: EntityManager, name: string) =>
      manager.query(`INSERT INTO counters (name, value) VALUES ('${name}', 1)`);
    /** What another connection sees: committed rows only. */
    const committedElsewhere = (prefix: string) => {
      const other = new Sqlite(t.db.options.database as string, { readonly: true });
      try {
        return other
          .prepare(`SELECT count(*) AS n FROM counters WHERE name LIKE ?`)
          .get(`${prefix}%`) as { n: number };
      } finally {
        other.close();
      }
    };

    it('answers each with its own result, undoes a failing one alone, and (SQLite) commits them once', async () => {
      let seenElsewhere: number | undefined;
      let runsOfA = 0;
      const outcomes = await Promise.allSettled([
        db.groupedTransaction(async (m) => {
          runsOfA += 1;
          await insert(m, 'gt-a');
          return 'a';
        }),
        db.groupedTransaction(async (m) => {
          await insert(m, 'gt-b');
          throw new Error('b failed');
        }),
        db.groupedTransaction(async (m) => {
          await insert(m, 'gt-c1');
          await insert(m, 'gt-c2');
          // SQLite: the first one's row is not committed yet, since all three share one commit.
          if (onSqlite()) seenElsewhere = committedElsewhere('gt-').n;
          return 'c';
        }),
      ]);
      expect(outcomes).toEqual([
        { status: 'fulfilled', value: 'a' },
        { status: 'rejected', reason: new Error('b failed') },
        { status: 'fulfilled', value: 'c' },
      ]);
      expect(await names('gt-')).toEqual(['gt-a', 'gt-c1', 'gt-c2']);
      if (onSqlite()) expect(seenElsewhere).toBe(0);
      // The group ran once without savepoints, was rolled back when 'b' threw, and ran again.
      expect(runsOfA).toBe(2);
    });

    it('inserts the rows of concurrent works unless they collide, the first of one key winning', async () => {
      // On PostgreSQL the four inserts travel as one multi-row INSERT … RETURNING.
      const attempt = (attemptId: number, userId: number) => ({
        clientId: 'grouped',
        attemptId,
        userId,
        moduleId: 1,
        recordedAt: new Date(),
      });
      await db.transaction((m) => insertUnlessConflict(m, CompletedAttempt, attempt(3, 30)));
      const went = await Promise.all(
        [attempt(1, 10), attempt(2, 20), attempt(1, 11), attempt(3, 31)].map((row) =>
          db.groupedTransaction((m) => insertUnlessConflict(m, CompletedAttempt, row), {
            concurrent: true,
          }),
        ),
      );
      expect(went).toEqual([true, true, false, false]);
      const stored = (await t.db.query(
        `SELECT attempt_id, user_id FROM completed_attempts WHERE client_id = 'grouped' ORDER BY attempt_id`,
      )) as { attempt_id: unknown; user_id: unknown }[];
      expect(stored.map((r) => [Number(r.attempt_id), Number(r.user_id)])).toEqual([
        [1, 10],
        [2, 20],
        [3, 30],
      ]);
    });

    it('fails alone a row the database refuses, and runs the same statement again after', async () => {
      // PostgreSQL: the three rows go as one named multi-row INSERT, which the NOT NULL refuses;
      // the group is rolled back and each runs alone. The same three-row text, prepared on the
      // connection by then, must still work once that transaction is gone.
      const attempt = (attemptId: number, userId: number | null) => ({
        clientId: 'refused',
        attemptId,
        userId: userId as number,
        moduleId: 1,
        recordedAt: new Date(),
      });
      const together = (rows: ReturnType<typeof attempt>[]) =>
        Promise.allSettled(
          rows.map((row) =>
            db.groupedTransaction((m) => insertUnlessConflict(m, CompletedAttempt, row), {
              concurrent: true,
            }),
          ),
        );
      const first = await together([attempt(1, 10), attempt(2, null), attempt(3, 30)]);
      expect(first.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await together([attempt(4, 40), attempt(5, 50), attempt(6, 60)])).toEqual(
        [true, true, true].map((value) => ({ status: 'fulfilled', value })),
      );
      const stored = (await t.db.query(
        `SELECT attempt_id, user_id FROM completed_attempts WHERE client_id = 'refused' ORDER BY attempt_id`,
      )) as { attempt_id: unknown; user_id: unknown }[];
      expect(stored.map((r) => [Number(r.attempt_id), Number(r.user_id)])).toEqual([
        [1, 10],
        [3, 30],
        [4, 40],
        [5, 50],
        [6, 60],
      ]);
    });

    it('fails the whole group when SQLite abandons its transaction (PostgreSQL: that one alone)', async () => {
      const outcomes = await Promise.allSettled([
        db.groupedTransaction((m) => insert(m, 'ab-a')),
        db.groupedTransaction(async (m) => {
          await insert(m, 'ab-b');
          await m.query('ROLLBACK'); // as SQLite does on an I/O error or a full disk
          throw new Error('abandoned');
        }),
        db.groupedTransaction((m) => insert(m, 'ab-c')),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(
        onSqlite() ? ['rejected', 'rejected', 'rejected'] : ['fulfilled', 'rejected', 'fulfilled'],
      );
      expect(await names('ab-')).toEqual(onSqlite() ? [] : ['ab-a', 'ab-c']);
    });
  });

  describe('a row and the rows that depend on it (insertWithDependents)', () => {
    const counter = (name: string) => rowInsert(Counter, { name, value: 1 });
    const attempt = (clientId: string, attemptId: number, userId: number | null = attemptId) =>
      rowInsert(CompletedAttempt, {
        clientId,
        attemptId,
        userId: userId as number,
        moduleId: 1,
        recordedAt: new Date(),
      });
    const stored = async (clientId: string) =>
      (
        (await t.db.query(
          `SELECT attempt_id, user_id FROM completed_attempts WHERE client_id = '${clientId}' ORDER BY attempt_id`,
        )) as { attempt_id: unknown; user_id: unknown }[]
      ).map((r) => [Number(r.attempt_id), Number(r.user_id)]);

    it('adds the dependents of a row that went in, skips those of one that collided, and answers each call', async () => {
      // On PostgreSQL the calls are one statement, whose text depends on which call gave which
      // dependents: the same calls in the other order check that the rows land with their call.
      for (const [prefix, reversed] of [
        ['wd1', false],
        ['wd2', true],
      ] as const) {
        await db.execute(db.sql(`INSERT INTO counters (name, value) VALUES ('${prefix}-old', 1)`));
        const calls = [
          [counter(`${prefix}-a`), [attempt(prefix, 1), attempt(prefix, 2)]],
          [counter(`${prefix}-old`), [attempt(prefix, 3)]], // collides: its dependent stays out
          [counter(`${prefix}-b`), []],
          [counter(`${prefix}-c`), [attempt(prefix, 2, 99), attempt(prefix, 4, 40)]],
        ] as const;
        const order = reversed ? [...calls].reverse() : calls;
        const went = await Promise.all(
          order.map(([first, dependents]) => insertWithDependents(db, first, [...dependents])),
        );
        expect(reversed ? went.reverse() : went).toEqual([true, false, true, true]);
        expect(await names(`${prefix}-`)).toEqual([
          `${prefix}-a`,
          `${prefix}-b`,
          `${prefix}-c`,
          `${prefix}-old`,
        ]);
        // Attempt 2 of a and of c collide: the one first in the statement went in.
        expect(await stored(prefix)).toEqual([[1, 1], reversed ? [2, 99] : [2, 2], [4, 40]]);
      }
    });

    it('of two calls with one key, adds the first and its dependents only', async () => {
      const went = await Promise.all([
        insertWithDependents(db, counter('wk-a'), [attempt('wk', 1)]),
        insertWithDependents(db, counter('wk-a'), [attempt('wk', 2)]),
        insertWithDependents(db, counter('wk-b'), [attempt('wk', 3)]),
      ]);
      expect(went).toEqual([true, false, true]);
      expect(await stored('wk')).toEqual([
        [1, 1],
        [3, 3],
      ]);
    });

    it('fails alone the call whose dependent the database refuses, nothing of it kept', async () => {
      const outcomes = await Promise.allSettled([
        insertWithDependents(db, counter('wr-a'), [attempt('wr', 1)]),
        insertWithDependents(db, counter('wr-b'), [attempt('wr', 2, null)]), // NOT NULL
        insertWithDependents(db, counter('wr-c'), [attempt('wr', 3)]),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await names('wr-')).toEqual(['wr-a', 'wr-c']);
      expect(await stored('wr')).toEqual([
        [1, 1],
        [3, 3],
      ]);
    });

    // The dependents' VALUES carry casts; the driver names an enum "enum" and an array by its
    // element type, neither of which PostgreSQL knows as a column's type.
    (usingPostgres() ? it : it.skip)(
      "casts a dependent's enum and array values to its columns' own types",
      async () => {
        const database = await createTestDatabase();
        const dataSource = new DataSource({
          type: 'postgres',
          url: database.url,
          entities: [CastFirst, CastDependent],
        });
        await dataSource.initialize();
        try {
          // The tables as TypeORM creates them (what migration:generate writes).
          await dataSource.synchronize();
          const castDb = await Database.open(dataSource, { lockTimeoutMs: 1000 });
          const call = (name: string, mood: Mood, moods: Mood[], counts: number[]) =>
            insertWithDependents(castDb, rowInsert(CastFirst, { name }), [
              rowInsert(CastDependent, { firstName: name, mood, moods, counts }),
            ]);
          // Two calls of one turn share a statement; a call alone has a text of its own.
          const together = await Promise.all([
            call('a', Mood.Calm, [Mood.Busy, Mood.Calm], [1, 2]),
            call('b', Mood.Busy, [], [3]),
          ]);
          expect(together).toEqual([true, true]);
          expect(await call('c', Mood.Busy, [Mood.Busy], [])).toBe(true);
          const rows: unknown = await dataSource.query(
            'SELECT first_name, mood::text, moods::text, counts::text FROM cast_dependents ORDER BY first_name',
          );
          expect(rows).toEqual([
            { first_name: 'a', mood: 'calm', moods: '{busy,calm}', counts: '{1,2}' },
            { first_name: 'b', mood: 'busy', moods: '{}', counts: '{3}' },
            { first_name: 'c', mood: 'busy', moods: '{busy}', counts: '{}' },
          ]);
        } finally {
          await dataSource.destroy();
          await database.drop();
        }
      },
    );
  });

  describe('writes by batch (batchedWrites)', () => {
    type Batcher = (
      run: (items: number[]) => Promise<Outcome<number>[]>,
    ) => (item: number) => Promise<number>;
    /** Batches of real statements that answer (or fail) when the test says. */
    function heldWrites(batcher: Batcher) {
      const batches: number[][] = [];
      const answers: { open: () => void; fail: (error: Error) => void }[] = [];
      const write = batcher(async (items) => {
        batches.push([...items]);
        await new Promise<void>((open, fail) => answers.push({ open, fail }));
        const { rows } = await db.execute(db.sql('SELECT :n AS n', { n: items.length }));
        expect(Number(rows[0].n)).toBe(items.length);
        return items.map((item) => ({ value: item * 10 }));
      });
      // Settled as they are issued, so that a failing batch's writes are handled at once.
      const submit = (item: number) =>
        write(item).then(
          (value) => value,
          (error: Error) => error.message,
        );
      return { batches, answers, submit };
    }

    it("while the bound is out, gathers later turns' writes into the next batch", async () => {
      // No overdue release within the test: it checks the bound alone.
      const bound = new FlightBound(WRITE_BATCHES_IN_FLIGHT, 60_000);
      const { batches, answers, submit } = heldWrites((run) => {
        const batcher = new TurnBatcher(3, run, bound);
        return (item) => batcher.submit(item);
      });
      const writes = [submit(1), submit(2), submit(3), submit(4)]; // at most 3 a batch
      await turnsUntil(() => batches.length === 1);
      // [4] waits for the place; writes of later turns join it, up to 3, then start another.
      writes.push(submit(5));
      await turn();
      await turn();
      writes.push(submit(6), submit(7));
      await turn();
      await turn();
      expect(batches).toEqual([[1, 2, 3]]);
      // A batch that fails fails its own writes and frees its place for the oldest waiting one.
      answers[0].fail(new Error('first batch failed'));
      await turnsUntil(() => batches.length === 2);
      expect(batches[1]).toEqual([4, 5, 6]);
      answers[1].open(); // its statement runs, then the place frees
      await until(() => batches.length === 3);
      expect(batches[2]).toEqual([7]);
      answers[2].open();
      expect(await Promise.all(writes)).toEqual([
        ...Array(3).fill('first batch failed'),
        40,
        50,
        60,
        70,
      ]);
    });

    it("bounds a batcher's batches out on PostgreSQL only, and lets a waiting one go when the one out does not answer (a stalled database)", async () => {
      const { batches, answers, submit } = heldWrites((run) => batchedWrites(db, run, 3));
      const writes = [submit(1)];
      await turnsUntil(() => batches.length === 1);
      const waitedFrom = Date.now();
      writes.push(submit(2));
      if (db.dialect === 'sqlite') {
        // No bound: the next turn's batch goes at once.
        await turnsUntil(() => batches.length === 2);
      } else {
        // After FLIGHT_WAIT_MS, checked by the time it took (a look after a few turns could be
        // made late by a slow turn).
        await until(() => batches.length === 2);
        expect(Date.now() - waitedFrom).toBeGreaterThanOrEqual(FLIGHT_WAIT_MS - 1);
      }
      expect(batches).toEqual([[1], [2]]);
      answers.forEach((answer) => answer.open());
      expect(await Promise.all(writes)).toEqual([10, 20]);
    });
  });

  it('is live and ready, not ready while the database is gone, ready again after', async () => {
    await request(t.http).get('/health').expect(200, { status: 'ok' });
    await request(t.http).get('/health/ready').expect(200, { status: 'ok', database: 'up' });

    await t.db.destroy();
    const down = await request(t.http).get('/health/ready');
    expect(down.status).toBe(503);
    expect(down.body).toEqual(errors.notReady);

    await t.db.initialize();
    await request(t.http).get('/health/ready').expect(200, { status: 'ok', database: 'up' });
  });
});
