import { jest } from '@jest/globals';
import { decodeJwt } from 'jose';
import request from 'supertest';
import {
  createClient,
  createUser,
  issueToken,
  issueUserToken,
} from '../factories/client.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { runNode } from '../support/processes.js';
import { oauthErrors } from '../support/responses.js';
import { UNTHROTTLED } from './limits.js';
import { ProtectedModule } from './protected.module.js';

// Each test runs the built CLI or server as separate processes, seconds each on a busy machine.
jest.setTimeout(90000);

/** docs/contract.md §8's auth commands, run as built (npm test builds dist/ first), on a running app's database. */
describe('auth CLI commands', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      env: { ...UNTHROTTLED, REVOCATION_REFRESH_MS: '250' },
      imports: [ProtectedModule],
    });
  });
  afterAll(async () => {
    await t.close();
  });

  const cli = (...args: string[]) =>
    runNode('dist/src/cli.js', args, { DATABASE_URL: t.database.url });

  const json = (result: { code: number | null; stdout: string }) => {
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    return JSON.parse(result.stdout);
  };

  const status = async (token: string) =>
    (await request(t.http).get('/test/protected').set('authorization', `Bearer ${token}`)).status;

  /**
   * The running app learns of a change made by another process (at its next refresh, every
   * REVOCATION_REFRESH_MS): polled until it does, within the test's timeout.
   */
  const refusedOnceLearned = async (token: string) => {
    while ((await status(token)) === 200) await new Promise((r) => setTimeout(r, 50));
    expect(await status(token)).toBe(401);
  };

  it('keeps stdout to the one JSON object when the application warns (logs go to stderr)', async () => {
    // Redis unreachable: the connection warns while the command runs.
    const result = await runNode('dist/src/cli.js', ['keys:list'], {
      DATABASE_URL: t.database.url,
      REDIS_URL: 'redis://127.0.0.1:1/0',
    });
    expect(json(result)).toEqual({ keys: expect.any(Array) });
    expect(result.stderr).toContain('Redis unreachable');
  });

  it('clients:create prints exactly the id and the secret, once; the client gets tokens', async () => {
    const out = json(
      await cli('clients:create', '--name', 'billing', '--scopes', 'customers:read'),
    );
    expect(Object.keys(out)).toEqual(['client_id', 'client_secret']);
    const res = await request(t.http)
      .post('/oauth/token')
      .send({ grant_type: 'client_credentials', scope: 'customers:read', ...out })
      .expect(200);
    expect(decodeJwt(res.body.access_token).client_id).toBe(out.client_id);

    // Default grant: client_credentials only.
    const user = await createUser(t);
    const password = await request(t.http)
      .post('/oauth/token')
      .send({
        grant_type: 'password',
        scope: 'customers:read',
        username: user.username,
        password: user.password,
        ...out,
      });
    expect(password.body).toEqual(oauthErrors.grantNotAllowed('password'));
  });

  it('clients:create --grants and users:create set up the password grant', async () => {
    const client = json(
      await cli(
        'clients:create',
        '--name',
        'portal',
        '--scopes',
        'customers:read customers:write',
        '--grants',
        'client_credentials,password',
      ),
    );
    const user = json(await cli('users:create', '--username', 'ada', '--password', 's3cret pass'));
    expect(user).toEqual({ id: expect.any(Number), username: 'ada' });
    const res = await request(t.http)
      .post('/oauth/token')
      .send({
        grant_type: 'password',
        scope: 'customers:write',
        username: 'ada',
        password: 's3cret pass',
        ...client,
      })
      .expect(200);
    expect(decodeJwt(res.body.access_token).sub).toBe(String(user.id));

    const again = await cli('users:create', '--username', 'ada', '--password', 'other-password');
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr.trim()).toBe('{"error":"The username is already taken."}');
  });

  it('clients:create counts a name in characters (255 emoji are a name)', async () => {
    const result = await cli(
      'clients:create',
      '--name',
      '🙂'.repeat(255),
      '--scopes',
      'customers:read',
    );
    expect(result.code).toBe(0);
  });

  it('users:create counts a username in characters (255 emoji are a username, 256 are not)', async () => {
    const made = await cli(
      'users:create',
      '--username',
      '🙂'.repeat(255),
      '--password',
      'pw-12345',
    );
    expect(made.code).toBe(0);
    const refused = await cli(
      'users:create',
      '--username',
      '🙂'.repeat(256),
      '--password',
      'x'.repeat(8),
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--username must be at most 255 printable characters/);
  });

  it.each([
    [['clients:create', '--scopes', 'customers:read'], /--name is required/],
    // Separators only: a client that could never be given a token.
    [['clients:create', '--name', 'x', '--scopes', ' , '], /--scopes must name at least one of/],
    [['tokens:revoke'], /--token is required/],
    [['users:create', '--username', 'u', '--password', '        '], /--password must not be blank/],
    [
      ['clients:create', '--name', 'two\nlines', '--scopes', 'customers:read'],
      /--name must be at most 255 characters, none of them control characters/,
    ],
    [
      ['clients:create', '--name', 'x'.repeat(256), '--scopes', 'customers:read'],
      /--name must be at most 255 characters/,
    ],
    [
      ['clients:create', '--name', 'x', '--scopes', 'customers:delete'],
      /Unknown scope customers:delete/,
    ],
    [
      ['clients:create', '--name', 'x', '--scopes', 'customers:read', '--grants', 'implicit'],
      /--grants must list/,
    ],
  ])('refuses %j with usage and exit 2', async (args, message) => {
    const result = await cli(...args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/Usage: npm run cli -- /);
  });

  it('clients:disable kills every token of the client on the running app, and only those', async () => {
    const doomed = await createClient(t, { scopes: ['customers:read'] });
    const user = await createUser(t);
    const tokens = [
      await issueToken(t, doomed),
      await issueToken(t, doomed),
      await issueUserToken(t, doomed, user),
    ];
    const bystander = await issueToken(t, await createClient(t, { scopes: ['customers:read'] }));
    for (const token of tokens) expect(await status(token)).toBe(200);

    const out = json(await cli('clients:disable', '--client-id', doomed.clientId));
    expect(out).toEqual({
      client_id: doomed.clientId,
      disabled: true,
      tokens_not_before: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    for (const token of tokens) await refusedOnceLearned(token);
    expect(await status(bystander)).toBe(200);

    const unknown = await cli('clients:disable', '--client-id', 'no-such-client');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe('{"error":"Client not found."}');
  });

  it('tokens:revoke revokes one token on the running app', async () => {
    const client = await createClient(t, { scopes: ['customers:read'] });
    const token = await issueToken(t, client);
    const sibling = await issueToken(t, client);
    expect(await status(token)).toBe(200);

    const out = json(await cli('tokens:revoke', '--token', token));
    const claims = decodeJwt(token);
    expect(out).toEqual({
      revoked: true,
      jti: claims.jti,
      client_id: client.clientId,
      expires_at: new Date(claims.exp! * 1000).toISOString(),
    });
    await refusedOnceLearned(token);
    expect(await status(sibling)).toBe(200);

    const garbage = await cli('tokens:revoke', '--token', 'not-a-token');
    expect(garbage.code).toBe(1);
    expect(garbage.stderr.trim()).toBe(
      '{"error":"The token is not a valid token issued by this service."}',
    );
  });
});
