import { jest } from '@jest/globals';
import { ConfigService } from '@nestjs/config';
import { decodeProtectedHeader } from 'jose';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, Database } from '../../src/database/index.js';
import { SigningKeysRepository } from '../../src/auth/signing-keys.repository.js';
import { SigningKey } from '../../src/auth/signing-key.entity.js';
import { SigningKeysService } from '../../src/auth/signing-keys.service.js';
import { createClient, issueToken } from '../factories/client.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { createTestDatabase } from '../support/database.js';
import { runNode, startServer } from '../support/processes.js';
import { UNTHROTTLED } from './limits.js';

// Each test runs the built CLI or server as separate processes, seconds each on a busy machine.
jest.setTimeout(90000);

function pem(type: 'ec' | 'rsa'): string {
  const { privateKey } =
    type === 'ec'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
}

const json = async (res: Response | Promise<Response>): Promise<any> => (await res).json();

/** Signing keys, JWKS and RFC 8414 metadata (docs/contract.md §3). */
describe('signing keys and metadata', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: UNTHROTTLED });
  });
  afterAll(async () => {
    await t.close();
  });

  it('publishes the public key that verifies issued tokens, and nothing private', async () => {
    const token = await issueToken(t, await createClient(t));
    const res = await request(t.http).get('/.well-known/jwks.json').expect(200);
    expect(res.body).toEqual({
      keys: [
        {
          kty: 'OKP',
          crv: 'Ed25519',
          x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
          kid: decodeProtectedHeader(token).kid,
          alg: 'EdDSA',
          use: 'sig',
        },
      ],
    });
    expect(res.headers['cache-control']).toBe('public, max-age=300');
  });

  it('serves RFC 8414 metadata built from TOKEN_ISSUER', async () => {
    const res = await request(t.http).get('/.well-known/oauth-authorization-server').expect(200);
    const methods = ['client_secret_basic', 'client_secret_post'];
    expect(res.body).toEqual({
      issuer: 'http://localhost:3000',
      token_endpoint: 'http://localhost:3000/oauth/token',
      jwks_uri: 'http://localhost:3000/.well-known/jwks.json',
      revocation_endpoint: 'http://localhost:3000/oauth/revoke',
      introspection_endpoint: 'http://localhost:3000/oauth/introspect',
      scopes_supported: ['customers:read', 'customers:write', 'webhooks:read', 'webhooks:write'],
      response_types_supported: [],
      grant_types_supported: ['client_credentials', 'password'],
      token_endpoint_auth_methods_supported: methods,
      revocation_endpoint_auth_methods_supported: methods,
      introspection_endpoint_auth_methods_supported: methods,
    });
  });

  it('generates one key when instances start at once on an empty database', async () => {
    const database = await createTestDatabase();
    let databases: Database[] = [];
    const sources = [0, 1, 2].map(
      () => new DataSource(buildDataSourceOptions({ url: database.url })),
    );
    try {
      await sources[0].initialize();
      await sources[0].runMigrations();
      await Promise.all(sources.slice(1).map((s) => s.initialize()));
      const config = new ConfigService({}) as never;
      databases = await Promise.all(sources.map((s) => Database.open(s, { lockTimeoutMs: 5000 })));
      const instances = sources.map(
        (_, i) =>
          new SigningKeysService(
            new SigningKeysRepository(databases[i], sources[i].getRepository(SigningKey)),
            config,
            undefined as never,
          ),
      );
      await Promise.all(instances.map((i) => i.refresh()));

      expect(new Set(instances.map((i) => i.signing.kid)).size).toBe(1);
      expect(await sources[0].getRepository(SigningKey).count()).toBe(1);
    } finally {
      await Promise.all(databases.map((d) => d.onModuleDestroy()));
      await Promise.all(sources.filter((s) => s.isInitialized).map((s) => s.destroy()));
      await database.drop();
    }
  });

  it('signs with TOKEN_SIGNING_KEY when set (P-256: ES256) and keeps it out of the database', async () => {
    const database = await createTestDatabase();
    const env = { DATABASE_URL: database.url, TOKEN_SIGNING_KEY: pem('ec'), LOG_LEVEL: 'warn' };
    const created = await runNode(
      'dist/src/cli.js',
      ['clients:create', '--name', 'x', '--scopes', 'customers:read'],
      env,
    );
    const credentials = JSON.parse(created.stdout);
    const server = await startServer(env);
    try {
      const jwks = await json(fetch(`${server.baseUrl}/.well-known/jwks.json`));
      expect(jwks.keys).toEqual([
        expect.objectContaining({ kty: 'EC', crv: 'P-256', alg: 'ES256' }),
      ]);
      const res = await fetch(`${server.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'client_credentials',
          scope: 'customers:read',
          ...credentials,
        }),
      });
      const { access_token } = await json(res);
      expect(decodeProtectedHeader(access_token)).toEqual({
        alg: 'ES256',
        typ: 'at+jwt',
        kid: jwks.keys[0].kid,
      });
      const introspection = await fetch(`${server.baseUrl}/oauth/introspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: access_token, ...credentials }),
      });
      expect((await json(introspection)).active).toBe(true);

      const source = new DataSource(buildDataSourceOptions({ url: database.url }));
      await source.initialize();
      expect(await source.getRepository(SigningKey).count()).toBe(0);
      await source.destroy();
    } finally {
      expect(await server.stop()).toBe(0);
      await database.drop();
    }
  });

  it('refuses to start with a TOKEN_SIGNING_KEY it cannot sign with (RSA), naming the variable', async () => {
    const database = await createTestDatabase();
    try {
      const result = await runNode('dist/src/main.js', [], {
        DATABASE_URL: database.url,
        TOKEN_SIGNING_KEY: pem('rsa'),
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        'Invalid configuration: TOKEN_SIGNING_KEY must be a PEM private key (Ed25519 or P-256)',
      );
    } finally {
      await database.drop();
    }
  });

  it('keeps a token working across a restart of the server on the same SQLite file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'company-api-restart-'));
    const env = { DATABASE_URL: `sqlite:${join(dir, 'app.sqlite')}`, LOG_LEVEL: 'warn' };
    try {
      let server = await startServer(env);
      const created = await runNode(
        'dist/src/cli.js',
        ['clients:create', '--name', 'x', '--scopes', 'customers:read'],
        env,
      );
      const credentials = JSON.parse(created.stdout);
      const post = (path: string, body: object) =>
        fetch(`${server.baseUrl}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...credentials, ...body }),
        }).then(json);
      const { access_token } = await post('/oauth/token', {
        grant_type: 'client_credentials',
        scope: 'customers:read',
      });
      expect(await server.stop()).toBe(0);

      server = await startServer(env);
      try {
        expect(await post('/oauth/introspect', { token: access_token })).toMatchObject({
          active: true,
          client_id: credentials.client_id,
        });
      } finally {
        expect(await server.stop()).toBe(0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
