import { Validator } from '@seriousme/openapi-schema-validator';
import request from 'supertest';
import { SCOPES, type Scope } from '../../src/auth/scopes.js';
import { basicAuth, createClient } from '../factories/client.factory.js';
import { createCustomer } from '../factories/customer.factory.js';
import { authHeader } from '../support/auth.js';
import { errors } from '../support/responses.js';
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

  it('declares the headers answers carry: X-Request-Id always, the challenge, Retry-After, no-store', async () => {
    const res = await request(t.http).get('/docs/openapi.json').expect(200);
    type Response = { headers?: Record<string, unknown> };
    const paths = res.body.paths as Record<
      string,
      Record<string, { responses: Record<string, Response> }>
    >;
    let checked = 0;
    for (const [path, operations] of Object.entries(paths)) {
      for (const { responses } of Object.values(operations)) {
        for (const [status, response] of Object.entries(responses)) {
          const names = Object.keys(response.headers ?? {});
          expect(names).toContain('X-Request-Id');
          if (status === '401' || status === '403') expect(names).toContain('WWW-Authenticate');
          // Two Authorization headers: 400 with Bearer's invalid_request challenge.
          if (status === '400' && path.startsWith('/v2/')) {
            expect(names).toContain('WWW-Authenticate');
          }
          if (status === '429' || status === '503') expect(names).toContain('Retry-After');
          if (path.startsWith('/oauth/'))
            expect(names).toEqual(expect.arrayContaining(['Cache-Control', 'Pragma']));
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
  });

  it('describes what the routes really take and send: POST /v2/customers, /health/ready, an oversized head on /oauth', async () => {
    const res = await request(t.http).get('/docs/openapi.json').expect(200);
    const { paths, components } = res.body;
    // POST /v2/customers takes no body at all (a retail customer), or a null company, or a
    // company: in OpenAPI 3.0, `nullable` beside a `$ref` is ignored, so null is its own branch.
    expect(paths['/v2/customers'].post.requestBody.required).toBe(false);
    expect(components.schemas.CreateCustomerDto.properties.company.oneOf).toEqual([
      { $ref: '#/components/schemas/NewCompanyDto' },
      { type: 'object', nullable: true, enum: [null] },
    ]);
    expect(components.schemas.NewCompanyDto.properties.type.enum).toContain(null);
    // /health/ready sends its own small object, not Terminus's result.
    const ready = paths['/health/ready'].get.responses;
    expect(ready['200'].content['application/json'].schema).toMatchObject({
      required: ['status', 'database'],
      properties: { status: { enum: ['ok'] }, database: { enum: ['up'] } },
    });
    expect(ready['503'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ErrorDto',
    });
    // A head over 64 KiB is refused before its path is known: either shape on /oauth.
    for (const status of ['414', '431']) {
      expect(
        paths['/oauth/token'].post.responses[status].content['application/json'].schema.oneOf,
      ).toEqual([
        { $ref: '#/components/schemas/OAuthErrorDto' },
        { $ref: '#/components/schemas/ErrorDto' },
      ]);
    }
  });

  it('describes the bearer tokens as OAuth 2.0 too: a generic client fetches one at the token URL with the scopes a route lists', async () => {
    const res = await request(t.http).get('/docs/openapi.json').expect(200);
    const flows = res.body.components.securitySchemes.oauth2.flows;
    expect(Object.keys(flows).sort()).toEqual(['clientCredentials', 'password']);
    for (const flow of Object.values(flows) as { tokenUrl: string; scopes: object }[]) {
      expect(flow.tokenUrl).toBe('/oauth/token');
      expect(Object.keys(flow.scopes).sort()).toEqual([...SCOPES].sort());
    }
    type Operation = { security?: Record<string, string[]>[]; parameters?: { in: string }[] };
    const paths = res.body.paths as Record<string, Record<string, Operation>>;
    let tried = 0;
    for (const [path, operations] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!path.startsWith('/v2/')) continue;
        // Every /v2 route: any bearer token, or OAuth 2.0 with at least one scope.
        const oauth2 = operation.security?.find((entry) => 'oauth2' in entry)?.oauth2;
        expect([path, operation.security?.some((entry) => 'bearer' in entry)]).toEqual([
          path,
          true,
        ]);
        expect([path, (oauth2 ?? []).length > 0]).toEqual([path, true]);
        if (method !== 'get' || operation.parameters?.some((p) => p.in === 'path')) continue;
        // What the document lists is what the route asks: a token of exactly those scopes,
        // fetched as a generic client would (client_secret_basic at the tokenUrl), is let in;
        // one of every other scope is 403.
        const scopes = oauth2 as Scope[];
        const fetchToken = async (granted: Scope[]) => {
          const client = await createClient(t, { scopes: granted, grants: ['client_credentials'] });
          const token = await request(t.http)
            .post(flows.clientCredentials.tokenUrl)
            .set('Authorization', basicAuth(client.clientId, client.clientSecret))
            .type('form')
            .send({ grant_type: 'client_credentials', scope: granted.join(' ') })
            .expect(200);
          return `Bearer ${token.body.access_token}`;
        };
        const allowed = await request(t.http)
          .get(path)
          .set('Authorization', await fetchToken(scopes));
        expect([path, allowed.status]).toEqual([path, 200]);
        const others = SCOPES.filter((scope) => !scopes.includes(scope));
        const refused = await request(t.http)
          .get(path)
          .set('Authorization', await fetchToken(others));
        expect([path, refused.status]).toEqual([path, 403]);
        tried++;
      }
    }
    expect(tried).toBeGreaterThanOrEqual(3);
  });

  it('says every /v2 body, and each object nested in one, refuses unknown fields (additionalProperties: false), as the routes do', async () => {
    const res = await request(t.http).get('/docs/openapi.json').expect(200);
    type Schema = {
      $ref?: string;
      oneOf?: Schema[];
      additionalProperties?: unknown;
      properties?: Record<string, Schema>;
    };
    const resolve = (schema: Schema): Schema =>
      schema.$ref
        ? res.body.components.schemas[schema.$ref.replace('#/components/schemas/', '')]
        : schema;
    const paths = res.body.paths as Record<
      string,
      Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>
    >;
    const closed: string[] = [];
    for (const [path, operations] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const schema = operation.requestBody?.content['application/json']?.schema;
        if (!path.startsWith('/v2/') || !schema) continue;
        const top = resolve(schema);
        for (const each of (top.oneOf ?? [top]).map(resolve)) {
          expect([path, each.additionalProperties]).toEqual([path, false]);
        }
        closed.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(closed.sort()).toEqual([
      'POST /v2/customers',
      'POST /v2/webhooks',
      'PUT /v2/customers/{customer_id}/company',
    ]);
    // A webhook's payload keeps fields its event does not name (docs/contract.md §6).
    const webhook = resolve(
      paths['/v2/webhooks'].post.requestBody!.content['application/json'].schema,
    );
    const payload = resolve((webhook.oneOf?.[0] ?? webhook).properties!.payload);
    expect(payload.additionalProperties).not.toBe(false);
    // The company nested in POST /v2/customers (@NestedObject()) is closed too; nothing else is:
    // no response's schema and no webhook payload's, however deep.
    const components = res.body.components.schemas as Record<string, Schema>;
    expect(
      Object.keys(components)
        .filter((name) => components[name].additionalProperties === false)
        .sort(),
    ).toEqual(['CreateCustomerDto', 'NewCompanyDto', 'UpdateCompanyDto']);
    expect(resolve(components.CreateCustomerDto.properties!.company.oneOf![0])).toBe(
      components.NewCompanyDto,
    );

    // And the routes refuse such a field: 422 naming it.
    const customer = await createCustomer(t, { name: 'A', type: 'plc' });
    const write = await authHeader(t, ['customers:write', 'webhooks:write']);
    const refused = await Promise.all([
      request(t.http)
        .post('/v2/customers')
        .set('Authorization', write)
        .send({ company: { name: 'B', type: 'plc' }, unexpected: 1 }),
      request(t.http)
        .put(`/v2/customers/${customer.id}/company`)
        .set('Authorization', write)
        .send({ name: 'C', unexpected: 1 }),
      request(t.http)
        .post('/v2/customers')
        .set('Authorization', write)
        .send({ company: { name: 'B', type: 'plc', unexpected: 1 } }),
      request(t.http)
        .post('/v2/webhooks')
        .set('Authorization', write)
        .send({
          event: 'learning.attempt.completed',
          payload: { user_id: 1, module_id: 2, attempt_id: 3 },
          unexpected: 1,
        }),
    ]);
    expect(refused.map((answer) => ({ status: answer.status, body: answer.body }))).toEqual(
      ['unexpected', 'unexpected', 'company.unexpected', 'unexpected'].map((field) => ({
        status: 422,
        body: errors.invalid({ [field]: [`The ${field} field is not allowed.`] }),
      })),
    );
  });

  it('serves Swagger UI at /docs', async () => {
    const res = await request(t.http).get('/docs').redirects(1);
    expect(res.status).toBe(200);
    expect(res.text).toContain('swagger');
  });
});
