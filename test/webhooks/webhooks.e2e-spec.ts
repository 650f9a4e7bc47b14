import { getMetadataStorage } from 'class-validator';
import request from 'supertest';
import { CompletedAttempt } from '../../src/learning/completed-attempt.entity.js';
import { WebhookEvent } from '../../src/webhooks/webhook-event.entity.js';
import { WebhookRegistry } from '../../src/webhooks/webhook-registry.js';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { authHeader, senderHeaders } from '../support/auth.js';
import { rawRequest } from '../support/raw-http.js';
import { errors } from '../support/responses.js';
import { UNEXPECTED_HANDLER_ERROR } from '../../src/webhooks/webhook-handler.decorator.js';
import { AddedNotes, NoteEventModule } from './note-event.module.js';

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Stands for the message naming every accepted event, which depends on the modules loaded. */
const UNKNOWN_EVENT = '(the accepted events)';

/**
 * With a test-only event (note.added) beside the application's own: nothing here may depend on
 * which events are registered, only on the rules every one of them follows.
 */
describe('POST /v2/webhooks and the webhook reads (docs/contract.md §6)', () => {
  let t: TestApp;
  let write: string;
  let read: string;
  let clientId: string;
  let registry: WebhookRegistry;
  beforeAll(async () => {
    t = await startTestApp({ imports: [NoteEventModule] });
    registry = t.app.get(WebhookRegistry);
    ({ write, read, clientId } = await senderHeaders(t));
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    request(t.http)
      .post('/v2/webhooks')
      .set('authorization', write)
      .set(headers)
      .send(body as object);
  const eventRows = () => t.db.getRepository(WebhookEvent).find();
  const attemptRows = (attemptId: number) =>
    t.db.getRepository(CompletedAttempt).findBy({ attemptId });

  describe('a valid delivery', () => {
    it('is stored, processed, and answered 200 with the stored event', async () => {
      const body = attemptCompleted({ user_id: 11, module_id: 22 });
      const res = await post(body).expect(200);

      expect(res.body).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          event: 'learning.attempt.completed',
          status: 'processed',
          received_at: expect.stringMatching(ISO_8601),
        },
      });
      const row = await t.db.getRepository(WebhookEvent).findOneByOrFail({ id: res.body.data.id });
      expect(row).toMatchObject({
        clientId,
        event: 'learning.attempt.completed',
        status: 'processed',
        attempts: 1,
        lastError: null,
      });
      expect(JSON.parse(row.payload)).toEqual(body.payload);
      expect(row.receivedAt.toISOString()).toBe(res.body.data.received_at);
      expect(row.processedAt).toBeInstanceOf(Date);
      expect(await attemptRows(body.payload.attempt_id)).toEqual([
        {
          clientId,
          attemptId: body.payload.attempt_id,
          userId: 11,
          moduleId: 22,
          recordedAt: expect.any(Date),
        },
      ]);
    });

    it('keeps unknown payload fields, as received', async () => {
      const body = attemptCompleted({ score: 0.93, meta: { source: 'lms', tags: ['a'] } });
      const res = await post(body).expect(200);

      const row = await t.db.getRepository(WebhookEvent).findOneByOrFail({ id: res.body.data.id });
      expect(row.payload).toBe(JSON.stringify(body.payload));
      const stored = await request(t.http)
        .get(`/v2/webhooks/${res.body.data.id}`)
        .set('authorization', read)
        .expect(200);
      expect(stored.body.data.payload).toEqual(body.payload);
    });
  });

  describe('an invalid delivery is 422 with the exact errors, and stores nothing', () => {
    const valid = () => attemptCompleted().payload;
    it.each<[string, unknown, Record<string, string[]>]>([
      [
        'an unknown event',
        { event: 'learning.attempt.started', payload: valid() },
        { event: [UNKNOWN_EVENT] },
      ],
      [
        'no event and no payload',
        {},
        {
          event: ['The event field is required.'],
          payload: ['The payload field is required.'],
        },
      ],
      [
        'an event that is not a string',
        { event: 5, payload: valid() },
        { event: ['The event must be a string.'] },
      ],
      [
        'a payload that is an array',
        { event: 'learning.attempt.completed', payload: [1, 2] },
        { payload: ['The payload must be an object.'] },
      ],
      [
        'a payload that is a string',
        { event: 'learning.attempt.completed', payload: '{"user_id":1}' },
        { payload: ['The payload must be an object.'] },
      ],
      [
        'a null payload',
        { event: 'learning.attempt.completed', payload: null },
        { payload: ['The payload field is required.'] },
      ],
      [
        // The envelope first: the event name is looked up once the payload is an object.
        'an unknown event and a payload that is not an object',
        { event: 'nope', payload: 3 },
        { payload: ['The payload must be an object.'] },
      ],
      [
        'an empty payload',
        { event: 'learning.attempt.completed', payload: {} },
        {
          'payload.user_id': ['The user_id field is required.'],
          'payload.module_id': ['The module_id field is required.'],
          'payload.attempt_id': ['The attempt_id field is required.'],
        },
      ],
      [
        'a missing attempt_id',
        { event: 'learning.attempt.completed', payload: { user_id: 1, module_id: 2 } },
        { 'payload.attempt_id': ['The attempt_id field is required.'] },
      ],
      [
        '"5" as a string',
        { event: 'learning.attempt.completed', payload: { ...valid(), user_id: '5' } },
        { 'payload.user_id': ['The user_id must be a positive integer.'] },
      ],
      [
        'a fraction, zero and a negative number',
        {
          event: 'learning.attempt.completed',
          payload: { user_id: 1.5, module_id: 0, attempt_id: -3 },
        },
        {
          'payload.user_id': ['The user_id must be a positive integer.'],
          'payload.module_id': ['The module_id must be a positive integer.'],
          'payload.attempt_id': ['The attempt_id must be a positive integer.'],
        },
      ],
      [
        'a boolean, a null and an integer beyond 2^53',
        {
          event: 'learning.attempt.completed',
          payload: { user_id: true, module_id: null, attempt_id: 2 ** 60 },
        },
        {
          'payload.user_id': ['The user_id must be a positive integer.'],
          'payload.module_id': ['The module_id field is required.'],
          'payload.attempt_id': [
            'The attempt_id must be at most 9007199254740991 (2^53 − 1, the largest integer a JSON number holds exactly).',
          ],
        },
      ],
      [
        'an unknown envelope field (only payload fields are open)',
        { event: 'learning.attempt.completed', payload: valid(), source: 'lms' },
        { source: ['The source field is not allowed.'] },
      ],
      ['a body that is an array', [1, 2], { body: ['The request body must be a JSON object.'] }],
      ['a body that is a string', '"hello"', { body: ['The request body must be a JSON object.'] }],
    ])('%s', async (_label, body, expected) => {
      const before = (await eventRows()).length;
      if (expected.event?.[0] === UNKNOWN_EVENT) {
        expected = {
          ...expected,
          event: [`The event must be one of: ${registry.events().join(', ')}.`],
        };
      }
      const res = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', write)
        .set('content-type', 'application/json')
        .send(typeof body === 'string' ? body : JSON.stringify(body));
      expect(res.status).toBe(422);
      expect(res.body).toEqual(errors.invalid(expected));
      expect((await eventRows()).length).toBe(before);
    });
  });

  describe('authentication and scopes (docs/contract.md §4)', () => {
    it('is 401 without a token, before looking at the body', async () => {
      const res = await request(t.http).post('/v2/webhooks').send({}).expect(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api"');
    });

    it('is 401 with an invalid token', async () => {
      const res = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', 'Bearer garbage')
        .send(attemptCompleted())
        .expect(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api", error="invalid_token"');
    });

    it('is 403 without webhooks:write, and nothing is stored', async () => {
      const body = attemptCompleted();
      const res = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', await authHeader(t, ['webhooks:read', 'customers:write']))
        .send(body)
        .expect(403);
      expect(res.headers['www-authenticate']).toBe(
        'Bearer realm="api", error="insufficient_scope", scope="webhooks:write"',
      );
      expect(await attemptRows(body.payload.attempt_id)).toEqual([]);
    });

    it.each(['/v2/webhooks', '/v2/webhooks/events', '/v2/webhooks/some-id'])(
      'GET %s is 401 without a token and 403 without webhooks:read',
      async (path) => {
        await request(t.http).get(path).expect(401);
        const writeOnly = await authHeader(t, ['webhooks:write']);
        const res = await request(t.http).get(path).set('authorization', writeOnly).expect(403);
        expect(res.headers['www-authenticate']).toBe(
          'Bearer realm="api", error="insufficient_scope", scope="webhooks:read"',
        );
      },
    );
  });

  describe('idempotency: the first delivery wins', () => {
    it('answers a sequential redelivery with the first id, processing it once', async () => {
      const body = attemptCompleted();
      const first = await post(body).expect(200);
      const again = await post(body).expect(200);
      // A redelivery carrying different data is still the same attempt: the first one stands.
      const changed = await post({ ...body, payload: { ...body.payload, user_id: 99 } }).expect(
        200,
      );

      expect(again.body).toEqual(first.body);
      expect(changed.body).toEqual(first.body);
      const rows = await t.db.getRepository(WebhookEvent).findBy({ id: first.body.data.id });
      expect(rows).toHaveLength(1);
      expect(rows[0].attempts).toBe(1);
      expect(await attemptRows(body.payload.attempt_id)).toEqual([
        expect.objectContaining({ userId: 7 }),
      ]);
    });

    it('answers 20 simultaneous deliveries with one id: one event row, one effect', async () => {
      const body = attemptCompleted();
      const before = (await eventRows()).length;
      const responses = await Promise.all(Array.from({ length: 20 }, () => post(body)));

      expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
      const ids = new Set(responses.map((r) => r.body.data.id));
      expect(ids.size).toBe(1);
      expect((await eventRows()).length).toBe(before + 1);
      expect(await attemptRows(body.payload.attempt_id)).toHaveLength(1);
    });

    it.each(['Idempotency-Key', 'webhook-id'])(
      'uses the %s header, when sent, instead of the natural key',
      async (header) => {
        const key = `msg_${header}_${Date.now()}`;
        const first = attemptCompleted();
        const second = attemptCompleted();
        const a = await post(first, { [header]: key }).expect(200);
        // Same key, other attempt: a redelivery as far as the sender said.
        const b = await post(second, { [header]: key }).expect(200);
        // Another key, same attempt: another delivery, whose effect is still recorded once.
        const c = await post(first, { [header]: `${key}-2` }).expect(200);

        expect(b.body.data.id).toBe(a.body.data.id);
        expect(c.body.data.id).not.toBe(a.body.data.id);
        expect(await attemptRows(first.payload.attempt_id)).toHaveLength(1);
        expect(await attemptRows(second.payload.attempt_id)).toEqual([]);
      },
    );

    it('takes Idempotency-Key as the key when both headers are sent (contract §6)', async () => {
      const key = `both_${Date.now()}`;
      const a = await post(attemptCompleted(), { 'Idempotency-Key': key, 'webhook-id': 'w1' });
      // Same Idempotency-Key, another webhook-id: a redelivery.
      const b = await post(attemptCompleted(), { 'Idempotency-Key': key, 'webhook-id': 'w2' });
      // Same webhook-id, another Idempotency-Key: another delivery.
      const c = await post(attemptCompleted(), {
        'Idempotency-Key': `${key}-2`,
        'webhook-id': 'w1',
      });
      expect([a.status, b.status, c.status]).toEqual([200, 200, 200]);
      expect(b.body.data.id).toBe(a.body.data.id);
      expect(c.body.data.id).not.toBe(a.body.data.id);
    });

    it.each(['Idempotency-Key', 'webhook-id'])(
      'refuses a %s that is not 1 to 255 visible ASCII characters (422 naming it), storing nothing',
      async (header) => {
        const before = (await eventRows()).length;
        const message = `The ${header} header must be 1 to 255 visible ASCII characters.`;
        for (const key of ['k'.repeat(256), 'k'.repeat(4000), 'two words', '', 'tab\tkey']) {
          const body = attemptCompleted();
          const res = await post(body, { [header]: key });
          expect([key.length, res.status]).toEqual([key.length, 422]);
          expect(res.body).toEqual(errors.invalid({ [header]: [message] }));
          expect(await attemptRows(body.payload.attempt_id)).toEqual([]);
        }
        // Bytes outside ASCII (a client library would refuse to send them), sent raw.
        const body = JSON.stringify(attemptCompleted());
        const raw = await rawRequest(
          t,
          `POST /v2/webhooks HTTP/1.1\r\nHost: x\r\nAuthorization: ${write}\r\n` +
            `Content-Type: application/json\r\n${header}: caf\xe9\r\n` +
            `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
        );
        expect(raw.status).toBe(422);
        expect(JSON.parse(raw.body)).toEqual(errors.invalid({ [header]: [message] }));
        expect((await eventRows()).length).toBe(before);

        // The longest key allowed is taken, and names the event on a redelivery.
        const longest = `${Date.now()}`.padEnd(255, '~');
        const first = await post(attemptCompleted(), { [header]: longest }).expect(200);
        const again = await post(attemptCompleted(), { [header]: longest }).expect(200);
        expect(again.body.data.id).toBe(first.body.data.id);
      },
    );

    it('answers 20 simultaneous deliveries under one Idempotency-Key with one id', async () => {
      const key = `burst-${Date.now()}`;
      const bodies = Array.from({ length: 20 }, () => attemptCompleted());
      const responses = await Promise.all(bodies.map((b) => post(b, { 'Idempotency-Key': key })));

      expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
      expect(new Set(responses.map((r) => r.body.data.id)).size).toBe(1);
      const recorded = await t.db
        .getRepository(CompletedAttempt)
        .createQueryBuilder('a')
        .where('a.attempt_id IN (:...ids)', { ids: bodies.map((b) => b.payload.attempt_id) })
        .getCount();
      expect(recorded).toBe(1);
    });
  });

  describe("a row the database refuses in the completed attempt handler's insert", () => {
    /** Makes the database refuse a completed attempt of user 13, or stop refusing it. */
    const refuseUser13 = (refuse: boolean) =>
      t.db.query(
        t.db.options.type === 'better-sqlite3'
          ? refuse
            ? `CREATE TRIGGER refuse_user_13 BEFORE INSERT ON completed_attempts
                WHEN NEW.user_id = 13 BEGIN SELECT RAISE(ABORT, 'user 13 refused'); END`
            : 'DROP TRIGGER refuse_user_13'
          : refuse
            ? 'ALTER TABLE completed_attempts ADD CONSTRAINT refuse_user_13 CHECK (user_id <> 13) NOT VALID'
            : 'ALTER TABLE completed_attempts DROP CONSTRAINT refuse_user_13',
      );

    it('fails that delivery alone among those sent together, stores it failed, and a redelivery after processes it', async () => {
      // Sent together (they may share a commit): the refused insert fails its own delivery only.
      const bodies = [12, 13, 14].map((user_id) => attemptCompleted({ user_id }));
      await refuseUser13(true);
      let answers: request.Response[];
      try {
        answers = await Promise.all(bodies.map((body) => post(body)));
      } finally {
        await refuseUser13(false);
      }
      expect(answers.map((r) => r.status)).toEqual([200, 500, 200]);
      const id = answers[1].body.id as string;
      expect(answers[1].body).toEqual(errors.webhookFailed(id));
      const failed = await t.db.getRepository(WebhookEvent).findOneByOrFail({ id });
      expect(failed).toMatchObject({ status: 'failed', attempts: 1, processedAt: null });
      // The database's words (a trigger's name, its message) are for the log, not the sender.
      expect(failed.lastError).toBe(UNEXPECTED_HANDLER_ERROR);
      expect(await Promise.all(bodies.map((body) => attemptRows(body.payload.attempt_id)))).toEqual(
        [[expect.objectContaining({ userId: 12 })], [], [expect.objectContaining({ userId: 14 })]],
      );

      const again = await post(bodies[1]).expect(200);
      expect(again.body.data).toMatchObject({ id, status: 'processed' });
      expect(await attemptRows(bodies[1].payload.attempt_id)).toEqual([
        expect.objectContaining({ userId: 13 }),
      ]);
    });
  });

  describe('per sending client', () => {
    it('the same attempt_id from two clients is two events and two attempts; neither sees the other', async () => {
      const other = await senderHeaders(t);
      const attemptId = attemptCompleted().payload.attempt_id;
      const mine = await post(attemptCompleted({ attempt_id: attemptId, user_id: 1 })).expect(200);
      const theirs = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', other.write)
        .send(attemptCompleted({ attempt_id: attemptId, user_id: 2 }))
        .expect(200);
      expect(theirs.body.data.id).not.toBe(mine.body.data.id);

      const recorded = await attemptRows(attemptId);
      expect(
        recorded
          .map((r) => ({ clientId: r.clientId, userId: r.userId }))
          .sort((a, b) => a.userId - b.userId),
      ).toEqual([
        { clientId, userId: 1 },
        { clientId: other.clientId, userId: 2 },
      ]);

      // Each redelivers: each gets its own first event back.
      const again = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', other.write)
        .send(attemptCompleted({ attempt_id: attemptId, user_id: 2 }))
        .expect(200);
      expect(again.body.data.id).toBe(theirs.body.data.id);

      const notFound = await request(t.http)
        .get(`/v2/webhooks/${theirs.body.data.id}`)
        .set('authorization', read);
      expect({ status: notFound.status, body: notFound.body }).toEqual({
        status: 404,
        body: { message: 'Webhook not found.' },
      });
      await request(t.http)
        .get(`/v2/webhooks/${theirs.body.data.id}`)
        .set('authorization', other.read)
        .expect(200);
      const listed = await request(t.http)
        .get('/v2/webhooks')
        .set('authorization', other.read)
        .expect(200);
      expect(listed.body.data.map((item: { id: string }) => item.id)).toEqual([
        theirs.body.data.id,
      ]);
      expect(listed.body.meta.total).toBe(1);
    });

    it('the same Idempotency-Key from two clients names two events', async () => {
      const other = await senderHeaders(t);
      const key = `shared-${Date.now()}`;
      const mine = await post(attemptCompleted(), { 'Idempotency-Key': key }).expect(200);
      const theirs = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', other.write)
        .set('Idempotency-Key', key)
        .send(attemptCompleted())
        .expect(200);
      expect(theirs.body.data.id).not.toBe(mine.body.data.id);
      const rows = await t.db.getRepository(WebhookEvent).findBy({ dedupeKey: `sender:${key}` });
      expect(rows.map((r) => r.clientId).sort()).toEqual([clientId, other.clientId].sort());
    });
  });

  describe('reading', () => {
    it('lists newest first, paged, filtered by event and status', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++)
        ids.push((await post(attemptCompleted()).expect(200)).body.data.id);

      const res = await request(t.http)
        .get('/v2/webhooks')
        .query('result_mode[mode]=paginated&result_mode[attributes][limit]=2')
        .query({ event: 'learning.attempt.completed', status: 'processed' })
        .set('authorization', read)
        .expect(200);
      expect(res.body.data.map((item: { id: string }) => item.id)).toEqual([ids[2], ids[1]]);
      expect(res.body.data[0]).toEqual({
        id: ids[2],
        event: 'learning.attempt.completed',
        status: 'processed',
        payload: expect.objectContaining({ user_id: 7, module_id: 3 }),
        attempts: 1,
        last_error: null,
        received_at: expect.stringMatching(ISO_8601),
        processed_at: expect.stringMatching(ISO_8601),
      });
      // This client's own events only.
      const total = await t.db
        .getRepository(WebhookEvent)
        .countBy({ status: 'processed', clientId });
      expect(res.body.meta).toEqual({
        current_page: 1,
        from: 1,
        to: 2,
        last_page: Math.ceil(total / 2),
        per_page: 2,
        total,
      });

      for (const query of [{ status: 'failed' }, { event: 'learning.attempt.started' }]) {
        const none = await request(t.http)
          .get('/v2/webhooks')
          .query(query)
          .set('authorization', read)
          .expect(200);
        expect(none.body).toEqual({
          data: [],
          meta: { current_page: 1, from: null, to: null, last_page: 1, per_page: 15, total: 0 },
        });
      }
    });

    it('refuses an unknown status or a bad page with 422', async () => {
      const res = await request(t.http)
        .get('/v2/webhooks')
        .query('status=done&result_mode[attributes][page]=0')
        .set('authorization', read)
        .expect(422);
      expect(res.body).toEqual(
        errors.invalid({
          status: ['The status must be one of: processed, failed.'],
          'result_mode.attributes.page': ['The page must be a positive integer.'],
        }),
      );
    });

    it('refuses an empty filter with 422 naming it, not an empty page; the document says minLength 1', async () => {
      for (const [query, field, message] of [
        ['event=', 'event', 'The event must not be empty.'],
        // No `=` at all is an empty value too.
        ['event', 'event', 'The event must not be empty.'],
        ['event=&status=processed', 'event', 'The event must not be empty.'],
        ['status=', 'status', 'The status must be one of: processed, failed.'],
      ]) {
        const res = await request(t.http).get(`/v2/webhooks?${query}`).set('authorization', read);
        expect({ query, status: res.status, body: res.body }).toEqual({
          query,
          status: 422,
          body: errors.invalid({ [field]: [message] }),
        });
      }
      const document = await request(t.http).get('/docs/openapi.json').expect(200);
      const parameters = document.body.paths['/v2/webhooks'].get.parameters as {
        name: string;
        schema: object;
      }[];
      expect(parameters.find(({ name }) => name === 'event')?.schema).toEqual({
        type: 'string',
        minLength: 1,
        maxLength: 100,
      });
    });

    it('gets one event; an unknown or malformed id is 404', async () => {
      const created = (await post(attemptCompleted()).expect(200)).body.data;
      const res = await request(t.http)
        .get(`/v2/webhooks/${created.id.toUpperCase()}`)
        .set('authorization', read)
        .expect(200);
      expect(res.body.data).toMatchObject({ ...created, attempts: 1, last_error: null });

      for (const id of ['01900000-0000-7000-8000-000000000000', 'not-a-uuid', '42']) {
        const missing = await request(t.http)
          .get(`/v2/webhooks/${id}`)
          .set('authorization', read)
          .expect(404);
        expect(missing.body).toEqual(errors.webhookNotFound);
      }
    });

    /** Every registered event with its payload DTO, and the fields the DTO validates. */
    const declared = () =>
      registry.definitions().map(({ event, payload }) => ({
        event,
        dto: payload.name,
        fields: [
          ...new Set(
            getMetadataStorage()
              .getTargetValidationMetadatas(payload, '', true, false)
              .map((rule) => rule.propertyName),
          ),
        ].sort(),
      }));

    it('registers every event of every loaded module, the test-only one included', () => {
      const events = declared().map(({ event }) => event);
      expect(events).toEqual(expect.arrayContaining(['learning.attempt.completed', 'note.added']));
      expect(registry.events()).toEqual([...events].sort());
    });

    it('lists every registered event, sorted, each with its payload schema', async () => {
      const res = await request(t.http)
        .get('/v2/webhooks/events')
        .set('authorization', read)
        .expect(200);
      const listed = res.body.data as { event: string; payload_schema: Record<string, any> }[];
      expect(listed.map(({ event }) => event)).toEqual(registry.events());
      for (const { event, fields } of declared()) {
        const schema = listed.find((each) => each.event === event)!.payload_schema;
        // Unknown payload fields are accepted: the schema says so. Every validated field is in it.
        expect({ event, type: schema.type, open: schema.additionalProperties }).toEqual({
          event,
          type: 'object',
          open: true,
        });
        expect({ event, fields: Object.keys(schema.properties).sort() }).toEqual({ event, fields });
        for (const required of schema.required ?? []) expect(fields).toContain(required);
      }
      // The application's own event, as docs/contract.md §6 gives it.
      expect(listed.find(({ event }) => event === 'learning.attempt.completed')).toEqual({
        event: 'learning.attempt.completed',
        payload_schema: {
          type: 'object',
          additionalProperties: true,
          required: ['user_id', 'module_id', 'attempt_id'],
          properties: {
            user_id: expect.objectContaining({ type: 'integer', minimum: 1 }),
            module_id: expect.objectContaining({ type: 'integer', minimum: 1 }),
            attempt_id: expect.objectContaining({ type: 'integer', minimum: 1 }),
          },
        },
      });
    });

    it('documents every registered event and its payload in the OpenAPI document', async () => {
      const doc = (await request(t.http).get('/docs/openapi.json').expect(200)).body;
      const body = doc.paths['/v2/webhooks'].post.requestBody.content['application/json'].schema;
      // One branch per event; a single event is its branch directly (a oneOf of one is none).
      const branches = (body.oneOf ?? [body]) as Record<string, any>[];
      const listed = (
        await request(t.http).get('/v2/webhooks/events').set('authorization', read).expect(200)
      ).body.data as { event: string; payload_schema: Record<string, any> }[];
      expect(branches.map((branch) => branch.properties.event.enum)).toEqual(
        registry.events().map((event) => [event]),
      );
      for (const { event, dto, fields } of declared()) {
        const branch = branches.find((each) => each.properties.event.enum[0] === event)!;
        expect({ event, required: branch.required, payload: branch.properties.payload }).toEqual({
          event,
          required: ['event', 'payload'],
          payload: { allOf: [{ $ref: `#/components/schemas/${dto}` }], additionalProperties: true },
        });
        const component = doc.components.schemas[dto];
        const { additionalProperties: _open, ...documented } = listed.find(
          (each) => each.event === event,
        )!.payload_schema;
        expect({ event, component }).toEqual({ event, component: documented });
        expect({ event, fields: Object.keys(component.properties).sort() }).toEqual({
          event,
          fields,
        });
      }
    });
  });

  describe('payload errors: every invalid field, each with the first rule it breaks as written', () => {
    const note = (payload: Record<string, unknown>) => post({ event: 'note.added', payload });

    it.each<[string, Record<string, unknown>, Record<string, string[]>]>([
      [
        'wrong types (type errors, not the size rules below them)',
        { note_id: '5000', title: 12345678901, priority: 7 },
        {
          'payload.note_id': ['The note_id must be an integer.'],
          'payload.title': ['The title must be a string.'],
          'payload.priority': ['The priority must be a string.'],
        },
      ],
      [
        'right types, out of range',
        { note_id: 5000, title: 'much too long a title', priority: 'urgent' },
        {
          'payload.note_id': ['The note_id must be at most 1000.'],
          'payload.title': ['The title must be at most 10 characters long.'],
          'payload.priority': ['The priority must be one of: low, high.'],
        },
      ],
      [
        'missing fields (required before anything else)',
        { priority: null },
        {
          'payload.note_id': ['The note_id field is required.'],
          'payload.title': ['The title field is required.'],
        },
      ],
      [
        'a rule after the first broken one is not reported',
        { note_id: 0, title: 'AB' },
        {
          'payload.note_id': ['The note_id must be at least 1.'],
          'payload.title': ['The title must be at least 3 characters long.'],
        },
      ],
      [
        'only the last rule broken',
        { note_id: 3, title: 'Ab cd' },
        { 'payload.title': ['The title must be lowercase letters and spaces.'] },
      ],
    ])('%s', async (_label, payload, expected) => {
      const before = (await eventRows()).length;
      const res = await note(payload).expect(422);
      expect(res.body).toEqual(errors.invalid(expected));
      expect((await eventRows()).length).toBe(before);
    });

    it('a valid payload reaches its handler', async () => {
      await note({ note_id: 42, title: 'a note' }).expect(200);
      expect(t.app.get(AddedNotes).ids).toContain(42);
    });
  });
});
