import { readFileSync } from 'node:fs';
import request from 'supertest';
import { buildDataSourceOptions, ListCountsFolder } from '../../src/database/index.js';
import { CompletedAttempt } from '../../src/learning/completed-attempt.entity.js';
import { createClient, issueToken } from '../factories/client.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { authHeader } from '../support/auth.js';
import { bearerChallenges, errors } from '../support/responses.js';
import { CreateLearningCatalog1764000000000 } from './1764000000000-CreateLearningCatalog.js';
import { LearningCatalogModule, PublishedLearningModule } from './learning-catalog.module.js';

/**
 * The extension trial of docs/extending.md ("Add a paged resource"): a module written only from
 * the docs, booted beside AppModule, brings a webhook event with its own table and a paged,
 * caller-scoped list. Nothing else in the app knows it; its migration runs with the others.
 */
describe('extending: a new event and a declared paged list (both databases)', () => {
  let t: TestApp;
  /** Two senders, each with a write token (deliveries) and a read token (its list). */
  const senders: { clientId: string; write: string; read: string }[] = [];

  beforeAll(async () => {
    t = await startTestApp({ imports: [LearningCatalogModule] });
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

  const deliver = (write: string, body: object) =>
    request(t.http).post('/v2/webhooks').set('authorization', write).send(body);
  const attempts = (read: string, query = '') =>
    request(t.http).get(`/v2/learning/attempts${query}`).set('authorization', read);
  const paged = (page: number, limit: number) =>
    `?result_mode[mode]=paginated&result_mode[attributes][page]=${page}&result_mode[attributes][limit]=${limit}`;

  it('migrates the schema its entities describe (no drift)', async () => {
    const pending = await t.db.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((query) => query.query)).toEqual([]);
    const applied: { name: string }[] = await t.db.query(`SELECT name FROM migrations`);
    expect(applied.map((row) => row.name)).toContain('CreateLearningCatalog1764000000000');
  });

  it('is registered for the TypeORM CLI and the CLI as for the app (no central list edited)', async () => {
    const cli = await (await import('../../ormconfig.js')).default;
    for (const options of [cli.options, buildDataSourceOptions({ url: t.database.url })]) {
      expect(options.entities).toContain(PublishedLearningModule);
      expect(options.migrations).toContain(CreateLearningCatalog1764000000000);
    }
  });

  it.each([
    ['Add a paged resource', 4],
    ['Add a webhook event', 3],
  ])('is the code docs/extending.md\'s "%s" shows', (title, count) => {
    const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');
    const doc = read('../../docs/extending.md');
    const heading = `## ${title}`;
    const end = doc.indexOf('\n## ', doc.indexOf(heading) + 1);
    const section = doc.slice(doc.indexOf(heading), end === -1 ? undefined : end);
    const snippets = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);
    // As the files would be in src/learning-catalog/: imports relative to src/.
    const code = ['./learning-catalog.module.ts', './1764000000000-CreateLearningCatalog.ts']
      .map((path) => read(path).replaceAll("'../../src/", "'../"))
      .join('\n');
    expect(snippets.length).toBe(count);
    for (const snippet of snippets) expect(code).toContain(snippet);
  });

  describe('learning.module.published', () => {
    it('stores the module in its own table, for the sender', async () => {
      const [alice] = senders;
      const res = await deliver(alice.write, {
        event: 'learning.module.published',
        payload: { module_id: 12, title: 'Fractions' },
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        event: 'learning.module.published',
        status: 'processed',
      });
      expect(await t.db.getRepository(PublishedLearningModule).find()).toEqual([
        { clientId: alice.clientId, moduleId: 12, title: 'Fractions' },
      ]);
    });

    it('answers 422 naming each invalid payload field, storing nothing', async () => {
      const res = await deliver(senders[0].write, {
        event: 'learning.module.published',
        payload: { module_id: 'x', title: '' },
      });
      expect(res.status).toBe(422);
      expect(res.body).toStrictEqual(
        errors.invalid({
          'payload.module_id': ['The module_id must be a positive integer.'],
          'payload.title': ['The title must be 1 to 200 characters.'],
        }),
      );
      expect(await t.db.getRepository(PublishedLearningModule).count()).toBe(1);
    });
  });

  describe('GET /v2/learning/attempts', () => {
    /** Each sender's attempt ids, as the list must answer them: newest (highest) first. */
    const expected: number[][] = [[], []];

    beforeAll(async () => {
      // Through the webhook, as senders report them…
      for (const [i, ids] of [
        [0, [1, 2, 3, 4, 5]],
        [1, [3, 4, 6]],
      ] as const) {
        for (const attemptId of ids) {
          const res = await deliver(senders[i].write, {
            event: 'learning.attempt.completed',
            payload: { user_id: 7, module_id: 12, attempt_id: attemptId },
          });
          expect(res.status).toBe(200);
          expected[i].push(attemptId);
        }
      }
      // …and stored directly, with ids spread over several blocks and superblocks.
      const far = [4096, 4097, 9000, 262_143, 262_144, 600_000, 5_000_000];
      await t.db.getRepository(CompletedAttempt).insert(
        far.map((attemptId) => ({
          clientId: senders[0].clientId,
          attemptId,
          userId: 8,
          moduleId: 12,
          recordedAt: new Date('2026-01-02T03:04:05.678Z'),
        })),
      );
      expected[0].push(...far);
      for (const ids of expected) ids.sort((a, b) => b - a);
    });

    /** Every page of a sender's list, with `limit` rows a page. */
    async function walk(read: string, limit: number) {
      const ids: number[] = [];
      for (let page = 1; ; page++) {
        const res = await attempts(read, paged(page, limit));
        expect(res.status).toBe(200);
        expect(res.body.meta.total).toBe(
          expected[senders.findIndex((s) => s.read === read)].length,
        );
        if (res.body.data.length === 0) return ids;
        ids.push(...res.body.data.map((item: { attempt_id: number }) => item.attempt_id));
      }
    }

    it("answers the caller's attempts with {data, meta}, newest first, exact total", async () => {
      const res = await attempts(senders[1].read);
      expect(res.status).toBe(200);
      expect(res.body).toStrictEqual({
        data: expected[1].map((attemptId) => ({
          attempt_id: attemptId,
          user_id: 7,
          module_id: 12,
          recorded_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        })),
        meta: { current_page: 1, from: 1, to: 3, last_page: 1, per_page: 15, total: 3 },
      });
    });

    it('reads dates back as stored, on both databases', async () => {
      const res = await attempts(senders[0].read, paged(1, 1));
      expect(res.body.data).toEqual([
        {
          attempt_id: 5_000_000,
          user_id: 8,
          module_id: 12,
          recorded_at: '2026-01-02T03:04:05.678Z',
        },
      ]);
    });

    it('places every page exactly, across blocks and superblocks', async () => {
      for (const limit of [1, 2, 3, 5, 100]) {
        expect(await walk(senders[0].read, limit)).toEqual(expected[0]);
      }
      const middle = await attempts(senders[0].read, paged(3, 4));
      expect(middle.body.data.map((item: { attempt_id: number }) => item.attempt_id)).toEqual(
        expected[0].slice(8, 12),
      );
      expect(middle.body.meta).toStrictEqual({
        current_page: 3,
        from: 9,
        to: 12,
        last_page: 3,
        per_page: 4,
        total: 12,
      });
      const past = await attempts(senders[0].read, paged(9, 4));
      expect(past.body).toStrictEqual({
        data: [],
        meta: { current_page: 9, from: null, to: null, last_page: 3, per_page: 4, total: 12 },
      });
    });

    it("shows no caller another's attempts, before and after the counts are folded", async () => {
      for (const round of ['appended', 'folded']) {
        if (round === 'folded') await t.app.get(ListCountsFolder).foldAll();
        expect(await walk(senders[1].read, 2)).toEqual(expected[1]);
        expect(await walk(senders[0].read, 4)).toEqual(expected[0]);
        const stranger = await authHeader(t, ['webhooks:read']);
        expect((await attempts(stranger)).body).toStrictEqual({
          data: [],
          meta: { current_page: 1, from: null, to: null, last_page: 1, per_page: 15, total: 0 },
        });
      }
    });

    it('counts deletes and moves between callers', async () => {
      const repository = t.db.getRepository(CompletedAttempt);
      await repository.delete({ clientId: senders[0].clientId, attemptId: 262_144 });
      await repository.update(
        { clientId: senders[0].clientId, attemptId: 9000 },
        {
          clientId: senders[1].clientId,
        },
      );
      const zero = expected[0].filter((id) => id !== 262_144 && id !== 9000);
      const one = [...expected[1], 9000].sort((a, b) => b - a);
      expected.splice(0, 2, zero, one);
      expect(await walk(senders[0].read, 3)).toEqual(zero);
      expect(await walk(senders[1].read, 3)).toEqual(one);
    });

    it('counts the rows already there when its migration runs again', async () => {
      const before = await walk(senders[0].read, 5);
      await t.db.undoLastMigration({ transaction: 'each' });
      const tables = await t.db.createQueryRunner().getTables(['completed_attempts_blocks']);
      expect(tables).toEqual([]);
      await t.db.runMigrations({ transaction: 'each' });
      expect(await walk(senders[0].read, 5)).toEqual(before);
      expect(await walk(senders[1].read, 2)).toEqual(expected[1]);
    });

    it('answers 401 without a valid token, 403 without webhooks:read, 422 for a bad query', async () => {
      const missing = await request(t.http).get('/v2/learning/attempts');
      expect(missing.status).toBe(401);
      expect(missing.body).toStrictEqual(errors.unauthenticated);
      expect(missing.headers['www-authenticate']).toBe(bearerChallenges.missing);

      const garbage = await attempts('Bearer garbage');
      expect(garbage.status).toBe(401);
      expect(garbage.body).toStrictEqual(errors.invalidToken);

      const wrongScope = await attempts(senders[0].write);
      expect(wrongScope.status).toBe(403);
      expect(wrongScope.body).toStrictEqual(errors.insufficientScope);
      expect(wrongScope.headers['www-authenticate']).toBe(
        bearerChallenges.insufficientScope('webhooks:read'),
      );

      const bad = await attempts(senders[0].read, '?result_mode[attributes][limit]=101');
      expect(bad.status).toBe(422);
      expect(bad.body).toStrictEqual(
        errors.invalid({
          'result_mode.attributes.limit': ['The limit must be between 1 and 100.'],
        }),
      );
    });
  });
});
