import fc from 'fast-check';
import request from 'supertest';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';

/**
 * Property-based fuzzing of every route the OpenAPI document lists: random bodies, types,
 * sizes, nesting, unicode, duplicate keys, query strings (broken result_mode brackets included),
 * Authorization headers and content types. FUZZ_RUNS raises the run count for a deeper local
 * run; a failure prints fast-check's seed and path, replayable with FUZZ_SEED / FUZZ_PATH.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const PATH = process.env.FUZZ_PATH;
const STACK_TRACE = /\bat [\w$.<>]+ \(|node_modules|\.ts:\d+|\.js:\d+:\d+|Error:/;

/** Any text as the raw bytes a client can put in a header (UTF-8 on the wire, no CR/LF/NUL). */
const asHeaderBytes = (value: string) =>
  Buffer.from(value, 'utf8')
    .toString('latin1')
    // eslint-disable-next-line no-control-regex
    .replace(/[\x00-\x08\x0a-\x1f\x7f]/g, '');

interface Route {
  method: string;
  path: string;
}

interface FuzzRequest {
  route: Route;
  params: string[];
  query: string;
  contentType: string | null;
  body: string | null;
  auth: 'none' | 'valid' | 'no-scopes' | 'garbage';
  garbageAuth: string;
}

const text = (maxLength: number) =>
  fc.oneof(
    fc.string({ maxLength }),
    fc.string({ unit: 'binary', maxLength }),
    fc.constantFrom('', ' ', '0', '-1', '1.5', '1e3', 'null', 'abc', '99999999999999999999'),
  );

const jsonish: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.constantFrom(null, true, 0, -1, 1.5, '5', '', [], {}, 'x'.repeat(300)),
);

const fieldNames = fc.constantFrom(
  'name',
  'type',
  'company',
  'event',
  'payload',
  'user_id',
  'module_id',
  'attempt_id',
  'street',
  'grant_type',
  'client_id',
  'client_secret',
  'scope',
  'username',
  'password',
  'token',
  '__proto__',
  'constructor',
);

const bodyText: fc.Arbitrary<string> = fc.oneof(
  // JSON objects built from the fields the routes know, with random values.
  fc.dictionary(fieldNames, jsonish, { maxKeys: 5 }).map((o) => JSON.stringify(o)),
  fc
    .record({
      event: fc.oneof(fc.constant('learning.attempt.completed'), text(30)),
      payload: jsonish,
    })
    .map((o) => JSON.stringify(o)),
  fc.jsonValue({ maxDepth: 6 }).map((v) => JSON.stringify(v)),
  // Duplicate keys, deep nesting, huge strings, broken JSON.
  fc
    .tuple(fieldNames, jsonish, jsonish)
    .map(([k, a, b]) => `{"${k}":${JSON.stringify(a)},"${k}":${JSON.stringify(b)}}`),
  fc.integer({ min: 1, max: 5000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
  fc.integer({ min: 1, max: 2_000_000 }).map((n) => JSON.stringify({ name: 'x'.repeat(n) })),
  text(200),
);

const queryText: fc.Arbitrary<string> = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom(
          'result_mode[mode]',
          'result_mode[attributes][page]',
          'result_mode[attributes][limit]',
          'result_mode[attributes]',
          'result_mode',
          'result_mode[',
          'result_mode]]',
          'result_mode[attributes][page][x]',
          'result_mode[][]',
          'event',
          'status',
          'access_token',
        ),
        text(20),
      ),
      text(20),
    ),
    { maxLength: 5 },
  )
  .map((pairs) =>
    pairs
      .map(
        ([k, v]) =>
          `${encodeURIComponent(k).replace(/%5B|%5D/g, (m) => (Math.random() < 0.5 ? m : decodeURIComponent(m)))}=${encodeURIComponent(v)}`,
      )
      .join('&'),
  );

function arbitraryRequest(routes: Route[]): fc.Arbitrary<FuzzRequest> {
  return fc.record({
    route: fc.constantFrom(...routes),
    params: fc.array(fc.oneof(fc.constantFrom('1', '2', '3'), text(30), fc.uuid().map(String)), {
      minLength: 3,
      maxLength: 3,
    }),
    query: fc.oneof(fc.constant(''), queryText),
    contentType: fc.constantFrom(
      'application/json',
      'application/json',
      'application/json; charset=utf-8',
      'application/x-www-form-urlencoded',
      'text/plain',
      'application/xml',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      null,
    ),
    body: fc.option(bodyText, { nil: null, freq: 4 }),
    auth: fc.constantFrom('none', 'valid', 'valid', 'no-scopes', 'garbage'),
    garbageAuth: fc.oneof(
      text(50),
      text(50).map((s) => `Bearer ${s}`),
      fc.constantFrom('Bearer', 'Bearer ', 'Basic Zm9vOmJhcg==', 'Bearer a.b.c', 'bearer x.y.z'),
    ),
  });
}

describe('fuzzing every route (fast-check)', () => {
  let t: TestApp;
  let routes: Route[];
  let valid: string;
  let noScopes: string;

  beforeAll(async () => {
    t = await startTestApp({
      env: { THROTTLE_TOKEN_PER_IP: '1000000' },
    });
    const doc = (await request(t.http).get('/docs/openapi.json')).body as {
      paths: Record<string, Record<string, unknown>>;
    };
    routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => ({ method: method.toUpperCase(), path })),
    );
    valid = await authHeader(t, [
      'customers:read',
      'customers:write',
      'webhooks:read',
      'webhooks:write',
    ]);
    noScopes = await authHeader(t, []);
    await request(t.http).post('/v2/customers').set('authorization', valid).send({});
  });
  afterAll(async () => {
    await t.close();
  });

  /** Every row of every table, to prove a refused request changed nothing. */
  async function snapshot(): Promise<string> {
    const parts: unknown[] = [];
    for (const meta of t.db.entityMetadatas) {
      parts.push(await t.db.query(`SELECT * FROM "${meta.tableName}" ORDER BY 1`));
    }
    return JSON.stringify(parts);
  }

  it('never answers 5xx, always in the contract shape, and changes nothing when it refuses', async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryRequest(routes), async (r) => {
        let i = 0;
        const url =
          r.route.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(r.params[i++ % 3])) +
          (r.query ? `?${r.query}` : '');
        const before = await snapshot();
        let req = request(t.http)[r.route.method.toLowerCase() as 'get'](url);
        if (r.auth === 'valid') req = req.set('authorization', valid);
        if (r.auth === 'no-scopes') req = req.set('authorization', noScopes);
        if (r.auth === 'garbage') req = req.set('authorization', asHeaderBytes(r.garbageAuth));
        if (r.contentType) req = req.set('content-type', r.contentType);
        const res =
          r.body !== null && r.route.method !== 'GET' ? await req.send(r.body) : await req;

        const where = `${r.route.method} ${url} → ${res.status} ${res.text.slice(0, 300)}`;
        expect({ where, status: res.status < 500 }).toEqual({ where, status: true });
        expect(res.headers['x-request-id']).toBeTruthy();
        if (r.route.path.startsWith('/docs')) return;
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(STACK_TRACE.test(res.text)).toBe(false);

        const body = res.body as Record<string, unknown>;
        if (res.status >= 400) {
          if (r.route.path.startsWith('/oauth/') && typeof body.error === 'string') {
            expect(Object.keys(body).every((k) => ['error', 'error_description'].includes(k))).toBe(
              true,
            );
          } else {
            expect(typeof body.message).toBe('string');
            if (res.status === 422) {
              const errors = body.errors as Record<string, unknown>;
              expect(Object.keys(errors).length).toBeGreaterThan(0);
              for (const messages of Object.values(errors)) {
                expect(Array.isArray(messages) && messages.length > 0).toBe(true);
                expect((messages as unknown[]).every((m) => typeof m === 'string')).toBe(true);
              }
            } else {
              expect(Object.keys(body)).toEqual(['message']);
            }
          }
          expect(await snapshot()).toBe(before);
        } else if (r.route.path.startsWith('/v2/')) {
          expect(body).toHaveProperty('data');
        }
      }),
      { numRuns: RUNS, seed: SEED, path: PATH, endOnFailure: true, verbose: 1 },
    );
  }, 300_000);
});
