import { Validator } from '@seriousme/openapi-schema-validator';
import request from 'supertest';
import { startTestApp, TestApp } from '../support/app.js';

describe('OpenAPI document', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('is valid OpenAPI and documents every route the app serves', async () => {
    const res = await request(t.http).get('/docs/openapi.json').expect(200);
    const result = await new Validator().validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);

    const documented = Object.entries(res.body.paths as Record<string, object>).flatMap(
      ([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const served = t.routes
      .filter((r) => !r.includes(' /docs'))
      .map((r) => r.replace(/:([A-Za-z_]+)/g, '{$1}'));
    expect([...new Set(served)].sort()).toEqual([...new Set(documented)].sort());
  });

  it('documents the webhook key headers with their rule (1–255 visible ASCII)', async () => {
    const res = await request(t.http).get('/docs/openapi.json').expect(200);
    const parameters = res.body.paths['/v2/webhooks'].post.parameters as {
      name: string;
      in: string;
      schema: Record<string, unknown>;
    }[];
    for (const name of ['Idempotency-Key', 'webhook-id']) {
      const header = parameters.find((p) => p.in === 'header' && p.name === name);
      expect(header?.schema).toEqual({
        type: 'string',
        minLength: 1,
        maxLength: 255,
        pattern: '^[\\x21-\\x7e]{1,255}$',
      });
      const pattern = new RegExp(header!.schema.pattern as string);
      expect(pattern.test('k'.repeat(255))).toBe(true);
      expect(pattern.test('k'.repeat(256))).toBe(false);
      expect(pattern.test('two words')).toBe(false);
    }
  });

  it('serves Swagger UI at /docs', async () => {
    const res = await request(t.http).get('/docs').redirects(1);
    expect(res.status).toBe(200);
    expect(res.text).toContain('swagger');
  });
});
