import { readFileSync } from 'node:fs';
import request from 'supertest';
import { buildDataSourceOptions, ListCountsFolder } from '../../src/database/index.js';
import { createClient, issueToken } from '../factories/client.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { authHeader } from '../support/auth.js';
import { bearerChallenges, errors } from '../support/responses.js';
import { CreateCourseCatalog1764000000000 } from './1764000000000-CreateCourseCatalog.js';
import { CourseCatalogModule, PublishedCourse, type Subject } from './course-catalog.module.js';
import { CoursesByTitle } from './courses-by-title.js';

/**
 * The worked example of docs/extending.md: a module written only from the docs, booted beside
 * AppModule, brings a webhook event with its own table and a paged, caller-scoped list filtered
 * by a column. Nothing else in the app knows it; its migration runs with the others. Its names
 * (catalog.*, catalog_courses) are its own, so that a module a reader adds to AppModule from the
 * docs (learning.module.published, say) does not meet it.
 */
describe('extending: a new event and a declared paged list (both databases)', () => {
  let t: TestApp;
  /** Two senders, each with a write token (deliveries) and a read token (its list). */
  const senders: { clientId: string; write: string; read: string }[] = [];
  let nextId = 0;

  beforeAll(async () => {
    t = await startTestApp({ imports: [CourseCatalogModule] });
    for (let i = 0; i < 2; i++) {
      const client = await createClient(t, {
        scopes: ['webhooks:write', 'webhooks:read'],
        grants: ['client_credentials'],
      });
      senders.push({
        clientId: client.clientId,
        write: `Bearer ${await issueToken(t, client, ['webhooks:write'])}`,
        read: `Bearer ${await issueToken(t, client, ['webhooks:read'])}`,
      });
    }
  });
  afterAll(async () => {
    await t.close();
  });

  /** A publication, sent with a webhook-id of its own unless `webhookId` is null. */
  const publish = (write: string, payload: object, webhookId: string | null = `m${nextId++}`) => {
    const post = request(t.http).post('/v2/webhooks').set('authorization', write);
    if (webhookId !== null) post.set('webhook-id', webhookId);
    return post.send({ event: 'catalog.course.published', payload });
  };
  const courses = (read: string, query = '') =>
    request(t.http).get(`/v2/catalog/courses${query}`).set('authorization', read);
  const paged = (page: number, limit: number, subject?: Subject) =>
    `?result_mode[mode]=paginated&result_mode[attributes][page]=${page}&result_mode[attributes][limit]=${limit}` +
    (subject ? `&subject=${subject}` : '');

  it('migrates the schema its entities describe (no drift)', async () => {
    const pending = await t.db.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((query) => query.query)).toEqual([]);
    const applied: { name: string }[] = await t.db
      .createQueryBuilder()
      .select('name')
      .from('migrations', 'migration')
      .getRawMany();
    expect(applied.map((row) => row.name)).toContain('CreateCourseCatalog1764000000000');
  });

  it('is registered for the TypeORM CLI and the CLI as for the app (no central list edited)', async () => {
    const cli = await (await import('../../ormconfig.js')).default;
    for (const options of [cli.options, buildDataSourceOptions({ url: t.database.url })]) {
      expect(options.entities).toContain(PublishedCourse);
      expect(options.migrations).toContain(CreateCourseCatalog1764000000000);
    }
  });

  it.each([
    ['Add a paged resource', 7],
    ['Add a webhook event', 3],
    ['Test a module', 2],
  ])('is the code docs/extending.md\'s "%s" shows', (title, count) => {
    const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');
    const doc = read('../../docs/extending.md');
    const heading = `## ${title}`;
    const end = doc.indexOf('\n## ', doc.indexOf(heading) + 1);
    const section = doc.slice(doc.indexOf(heading), end === -1 ? undefined : end);
    const snippets = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);
    // As the files would be in src/course-catalog/: imports relative to src/.
    const code = [
      './course-catalog.module.ts',
      './1764000000000-CreateCourseCatalog.ts',
      './courses-by-title.ts',
      './course-catalog.e2e-spec.ts',
    ]
      .map((path) => read(path).replaceAll("'../../src/", "'../"))
      .join('\n');
    expect(snippets.length).toBe(count);
    for (const snippet of snippets) expect(code).toContain(snippet);
  });

  describe('catalog.course.published', () => {
    const stored = () => t.db.getRepository(PublishedCourse).find({ order: { courseId: 'ASC' } });

    it('stores the course in its own table, for the sender', async () => {
      const [alice] = senders;
      const res = await publish(alice.write, {
        course_id: 12,
        title: 'Fractions',
        subject: 'maths',
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        event: 'catalog.course.published',
        status: 'processed',
      });
      expect(await stored()).toEqual([
        { clientId: alice.clientId, courseId: 12, title: 'Fractions', subject: 'maths' },
      ]);
    });

    it('replaces the course on a new publication; the same course without a key is a redelivery', async () => {
      const [alice] = senders;
      const renamed = await publish(alice.write, {
        course_id: 12,
        title: 'Fractions and decimals',
        subject: 'maths',
      });
      expect(renamed.status).toBe(200);
      expect(await stored()).toEqual([
        {
          clientId: alice.clientId,
          courseId: 12,
          title: 'Fractions and decimals',
          subject: 'maths',
        },
      ]);
      const first = await publish(
        alice.write,
        { course_id: 12, title: 'x', subject: 'science' },
        null,
      );
      expect(first.status).toBe(200);
      // No webhook-id: the course id identifies it (dedupeKey); that event was never stored
      // under it, so it is processed once…
      const again = await publish(
        alice.write,
        { course_id: 12, title: 'y', subject: 'languages' },
        null,
      );
      // …and sent again without a key, it is that event's redelivery: the first answer, no run.
      expect(again.status).toBe(200);
      expect(again.body.data.id).toBe(first.body.data.id);
      expect(await stored()).toEqual([
        { clientId: alice.clientId, courseId: 12, title: 'x', subject: 'science' },
      ]);
    });

    it('answers 422 naming each invalid payload field, storing nothing', async () => {
      const res = await publish(senders[0].write, { course_id: 'x', title: '', subject: 'art' });
      expect(res.status).toBe(422);
      expect(res.body).toStrictEqual(
        errors.invalid({
          'payload.course_id': ['The course_id must be a positive integer.'],
          'payload.title': ['The title must be 1 to 200 characters.'],
          'payload.subject': ['The subject must be one of: languages, maths, science.'],
        }),
      );
      expect(await t.db.getRepository(PublishedCourse).count()).toBe(1);
    });
  });

  describe('GET /v2/catalog/courses/:course_id', () => {
    const course = (read: string | undefined, id: string) => {
      const get = request(t.http).get(`/v2/catalog/courses/${id}`);
      return read ? get.set('authorization', read) : get;
    };

    it("answers one of the caller's courses with {data}, anything else 404 with its message", async () => {
      const [alice, bob] = senders;
      const found = await course(alice.read, '12');
      expect({ status: found.status, body: found.body }).toEqual({
        status: 200,
        body: { data: { course_id: 12, title: 'x', subject: 'science' } },
      });
      for (const [read, id] of [
        [bob.read, '12'],
        [alice.read, '13'],
        [alice.read, '012'],
        [alice.read, 'twelve'],
      ]) {
        const missing = await course(read, id);
        expect({ id, status: missing.status, body: missing.body }).toEqual({
          id,
          status: 404,
          body: { message: 'Course not found.' },
        });
      }
    });

    it('answers 401 without a token and 403 without webhooks:read, also for an unknown course', async () => {
      expect((await course(undefined, '999')).status).toBe(401);
      expect((await course(senders[0].write, '999')).status).toBe(403);
    });
  });

  describe('GET /v2/catalog/courses', () => {
    /** Each sender's courses as the list must answer them: highest course id first. */
    const expected: { id: number; subject: Subject }[][] = [[], []];
    const ids = (sender: number, subject?: Subject) =>
      expected[sender].filter((c) => !subject || c.subject === subject).map((c) => c.id);

    beforeAll(async () => {
      // The course the event tests left: clear() is TRUNCATE on PostgreSQL, DELETE on SQLite,
      // and the counts follow either.
      await t.db.getRepository(PublishedCourse).clear();
      const subjects: Subject[] = ['maths', 'science', 'languages'];
      // Through the webhook, as senders publish them…
      for (const [i, list] of [
        [0, [1, 2, 3, 4, 5]],
        [1, [3, 4, 6]],
      ] as const) {
        for (const id of list) {
          const subject = subjects[id % 3];
          const res = await publish(senders[i].write, { course_id: id, title: `C${id}`, subject });
          expect(res.status).toBe(200);
          expected[i].push({ id, subject });
        }
      }
      // …and stored directly, with ids spread over several blocks and superblocks.
      const far = [4096, 4097, 9000, 262_143, 262_144, 600_000, 5_000_000];
      await t.db.getRepository(PublishedCourse).insert(
        far.map((id) => ({
          clientId: senders[0].clientId,
          courseId: id,
          title: `C${id}`,
          subject: subjects[id % 3],
        })),
      );
      expected[0].push(...far.map((id) => ({ id, subject: subjects[id % 3] })));
      for (const list of expected) list.sort((a, b) => b.id - a.id);
    });

    /** Every page of a sender's list (one subject, or all), with `limit` rows a page. */
    async function walk(sender: number, limit: number, subject?: Subject) {
      const found: number[] = [];
      for (let page = 1; ; page++) {
        const res = await courses(senders[sender].read, paged(page, limit, subject));
        expect(res.status).toBe(200);
        expect(res.body.meta.total).toBe(ids(sender, subject).length);
        if (res.body.data.length === 0) return found;
        found.push(...res.body.data.map((item: { course_id: number }) => item.course_id));
      }
    }

    it("answers the caller's courses with {data, meta}, highest id first, exact total", async () => {
      const res = await courses(senders[1].read);
      expect(res.status).toBe(200);
      expect(res.body).toStrictEqual({
        data: [
          { course_id: 6, title: 'C6', subject: 'maths' },
          { course_id: 4, title: 'C4', subject: 'science' },
          { course_id: 3, title: 'C3', subject: 'maths' },
        ],
        meta: { current_page: 1, from: 1, to: 3, last_page: 1, per_page: 15, total: 3 },
      });
    });

    it('filters by subject, with the exact total of that subject', async () => {
      const res = await courses(senders[1].read, '?subject=maths');
      expect(res.status).toBe(200);
      expect(res.body.data.map((item: { course_id: number }) => item.course_id)).toEqual([6, 3]);
      expect(res.body.meta.total).toBe(2);
      for (const subject of ['maths', 'science', 'languages'] as const) {
        expect(await walk(0, 3, subject)).toEqual(ids(0, subject));
      }
    });

    it("pages them by title with findAndCount, as the docs' list in another order does", async () => {
      const byTitle = new CoursesByTitle(t.db.getRepository(PublishedCourse));
      const second = await byTitle.pageOf(senders[1].clientId, {
        result_mode: { mode: 'paginated', attributes: { page: 2, limit: 2 } },
      });
      expect(second.items.map((course) => course.title)).toEqual(['C6']);
      expect({ total: second.total, request: second.request }).toEqual({
        total: 3,
        request: { page: 2, limit: 2, offset: 2 },
      });
    });

    it('places every page exactly, across blocks and superblocks', async () => {
      for (const limit of [1, 2, 3, 5, 100]) expect(await walk(0, limit)).toEqual(ids(0));
      const middle = await courses(senders[0].read, paged(3, 4));
      expect(middle.body.data.map((item: { course_id: number }) => item.course_id)).toEqual(
        ids(0).slice(8, 12),
      );
      expect(middle.body.meta).toStrictEqual({
        current_page: 3,
        from: 9,
        to: 12,
        last_page: 3,
        per_page: 4,
        total: 12,
      });
      const past = await courses(senders[0].read, paged(9, 4));
      expect(past.body).toStrictEqual({
        data: [],
        meta: { current_page: 9, from: null, to: null, last_page: 3, per_page: 4, total: 12 },
      });
    });

    it("shows no caller another's courses, before and after the counts are folded", async () => {
      for (const round of ['appended', 'folded']) {
        if (round === 'folded') await t.app.get(ListCountsFolder).foldAll();
        expect(await walk(1, 2)).toEqual(ids(1));
        expect(await walk(0, 4)).toEqual(ids(0));
        expect(await walk(0, 2, 'science')).toEqual(ids(0, 'science'));
        const stranger = await authHeader(t, ['webhooks:read']);
        expect((await courses(stranger)).body).toStrictEqual({
          data: [],
          meta: { current_page: 1, from: null, to: null, last_page: 1, per_page: 15, total: 0 },
        });
      }
    });

    it('counts deletes, moves between callers and between subjects', async () => {
      const repository = t.db.getRepository(PublishedCourse);
      await repository.delete({ clientId: senders[0].clientId, courseId: 262_144 });
      await repository.update(
        { clientId: senders[0].clientId, courseId: 9000 },
        { clientId: senders[1].clientId },
      );
      // A new publication moves course 4097 from its subject to languages.
      const moved = await publish(senders[0].write, {
        course_id: 4097,
        title: 'C4097',
        subject: 'languages',
      });
      expect(moved.status).toBe(200);
      const zero = expected[0]
        .filter((c) => c.id !== 262_144 && c.id !== 9000)
        .map((c) => (c.id === 4097 ? { id: c.id, subject: 'languages' as const } : c));
      const one = [...expected[1], expected[0].find((c) => c.id === 9000)!].sort(
        (a, b) => b.id - a.id,
      );
      expected.splice(0, 2, zero, one);
      expect(await walk(0, 3)).toEqual(ids(0));
      expect(await walk(1, 3)).toEqual(ids(1));
      for (const subject of ['maths', 'science', 'languages'] as const) {
        expect(await walk(0, 2, subject)).toEqual(ids(0, subject));
      }
    });

    it('counts the rows already there when its migration runs again', async () => {
      const before = await walk(0, 5);
      // Its own table goes with it: keep the rows to put them back.
      const rows = await t.db.getRepository(PublishedCourse).find();
      // Its own down() and up(), not "the last migration": a module added beside it may be later.
      const migration = new CreateCourseCatalog1764000000000();
      const runner = t.db.createQueryRunner();
      try {
        for (const step of ['down', 'up'] as const) {
          await runner.startTransaction();
          await migration[step](runner);
          await runner.commitTransaction();
          const tables = await runner.getTables(['catalog_courses_blocks']);
          expect(tables.length).toBe(step === 'down' ? 0 : 1);
        }
      } finally {
        await runner.release();
      }
      await t.db.getRepository(PublishedCourse).insert(rows);
      expect(await walk(0, 5)).toEqual(before);
      expect(await walk(1, 2)).toEqual(ids(1));
    });

    it('answers 401 without a valid token, 403 without webhooks:read, 422 for a bad query', async () => {
      const missing = await request(t.http).get('/v2/catalog/courses');
      expect(missing.status).toBe(401);
      expect(missing.body).toStrictEqual(errors.unauthenticated);
      expect(missing.headers['www-authenticate']).toBe(bearerChallenges.missing);

      const garbage = await courses('Bearer garbage');
      expect(garbage.status).toBe(401);
      expect(garbage.body).toStrictEqual(errors.invalidToken);

      const wrongScope = await courses(senders[0].write);
      expect(wrongScope.status).toBe(403);
      expect(wrongScope.body).toStrictEqual(errors.insufficientScope);
      expect(wrongScope.headers['www-authenticate']).toBe(
        bearerChallenges.insufficientScope('webhooks:read'),
      );

      const bad = await courses(senders[0].read, '?result_mode[attributes][limit]=101&subject=art');
      expect(bad.status).toBe(422);
      expect(bad.body).toStrictEqual(
        errors.invalid({
          'result_mode.attributes.limit': ['The limit must be between 1 and 100.'],
          subject: ['The subject must be one of: languages, maths, science.'],
        }),
      );
    });
  });
});
