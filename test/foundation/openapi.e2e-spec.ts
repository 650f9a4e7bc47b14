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

  it('serves Swagger UI at /docs', async () => {
    const res = await request(t.http).get('/docs').redirects(1);
    expect(res.status).toBe(200);
    expect(res.text).toContain('swagger');
  });
});
