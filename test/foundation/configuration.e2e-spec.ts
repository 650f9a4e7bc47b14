import { jest } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as oidc from 'openid-client';
import { freePort, ROOT, runNode, startServer, type ServerProcess } from '../support/processes.js';

// Each test runs the built server and CLI as separate processes, seconds each on a busy machine.
jest.setTimeout(90000);

/** README "Configuration": `.env`, the issuer a stock client expects, discovery that works. */
describe('configuration as a new user meets it', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'company-api-config-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const metadata = async (server: ServerProcess) =>
    (await (await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server`)).json()) as {
      issuer: string;
    };

  it('a .env line that is not NAME=value stops the server and the CLI with one line naming it', async () => {
    // Node's parser took the line as the start of a name running to the next `=`: the setting on
    // the line after it was dropped, and the server started on the default database.
    writeFileSync(
      join(dir, '.env'),
      `# a comment\nBOGUS LINE\nDATABASE_URL=sqlite:${join(dir, 'named.sqlite')}\n`,
    );
    const unset = { DATABASE_URL: undefined };
    const line =
      '.env line 2 is not NAME=value (a comment starts with #); nothing was read from .env.\n';
    const cli = await runNode('dist/src/cli.js', ['keys:list'], unset, 30000, dir);
    expect({ code: cli.code, stdout: cli.stdout, stderr: cli.stderr }).toEqual({
      code: 1,
      stdout: '',
      stderr: line,
    });
    const server = await runNode('dist/src/main.js', [], unset, 30000, dir);
    expect({ code: server.code, stderr: server.stderr }).toEqual({ code: 1, stderr: line });
    // Nothing was made: no database anywhere.
    expect(existsSync(join(dir, 'data'))).toBe(false);
    expect(existsSync(join(dir, 'named.sqlite'))).toBe(false);
  });

  it('the server and the CLI both read .env in their working directory; the real environment wins', async () => {
    const database = `sqlite:${join(dir, 'from-dotenv.sqlite')}`;
    writeFileSync(
      join(dir, '.env'),
      `# a comment\nDATABASE_URL=${database}\nTOKEN_ISSUER=https://from-file.example\n`,
    );
    // No DATABASE_URL in the real environment: both must take the file's.
    const unset = { DATABASE_URL: undefined, TOKEN_ISSUER: undefined };
    const created = await runNode(
      'dist/src/cli.js',
      ['clients:create', '--name', 'dotenv', '--scopes', 'customers:read'],
      unset,
      30000,
      dir,
    );
    expect(created.code).toBe(0);
    const client = JSON.parse(created.stdout) as { client_id: string; client_secret: string };

    const server = await startServer(unset, 60000, undefined, dir);
    try {
      expect((await metadata(server)).issuer).toBe('https://from-file.example');
      // The client the CLI wrote is in the server's database.
      const res = await fetch(`${server.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'client_credentials',
          scope: 'customers:read',
          ...client,
        }),
      });
      expect(res.status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }

    const overridden = await startServer(
      { DATABASE_URL: undefined, TOKEN_ISSUER: 'https://from-env.example' },
      60000,
      undefined,
      dir,
    );
    try {
      expect((await metadata(overridden)).issuer).toBe('https://from-env.example');
    } finally {
      expect(await overridden.stop()).toBe(0);
    }
  });

  it("the TypeORM CLI (npm run migration:run) migrates .env's database, as the server would", async () => {
    const path = join(dir, 'from-dotenv.sqlite');
    writeFileSync(join(dir, '.env'), `DATABASE_URL=sqlite:${path}\n`);
    const unset = { DATABASE_URL: undefined };
    const run = await runNode(
      'node_modules/typeorm/cli.js',
      ['migration:run', '-d', join(ROOT, 'dist/ormconfig.js')],
      unset,
      60000,
      dir,
    );
    expect(run.code).toBe(0);
    // It took the file's database, not the default one under the working directory.
    expect(existsSync(join(dir, 'data'))).toBe(false);
    const status = await runNode('dist/src/cli.js', ['db:status'], unset, 30000, dir);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ pending: [] });
  });

  it('the CLI says on stderr when it makes a new SQLite database (a first run, or a mistyped path)', async () => {
    const path = join(dir, 'mistyped', 'app.sqlite');
    const list = () =>
      runNode('dist/src/cli.js', ['keys:list'], { DATABASE_URL: `sqlite:${path}` }, 30000, dir);
    const first = await list();
    expect({ code: first.code, stderr: first.stderr }).toEqual({
      code: 0,
      stderr: `No database at ${path}: a new one is made there. If the server uses another, check DATABASE_URL.\n`,
    });
    expect(existsSync(path)).toBe(true);
    const again = await list();
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' });

    // db:status runs before the application boots, and made its file without a word.
    const other = join(dir, 'other', 'app.sqlite');
    const status = await runNode(
      'dist/src/cli.js',
      ['db:status'],
      { DATABASE_URL: `sqlite:${other}` },
      30000,
      dir,
    );
    expect({ code: status.code, stderr: status.stderr }).toEqual({
      code: 0,
      stderr: `No database at ${other}: a new one is made there. If the server uses another, check DATABASE_URL.\n`,
    });
  });

  it('without TOKEN_ISSUER the issuer is the address the server listens on', async () => {
    const server = await startServer({
      DATABASE_URL: `sqlite:${join(dir, 'app.sqlite')}`,
      TOKEN_ISSUER: undefined,
    });
    try {
      const port = new URL(server.baseUrl).port;
      expect(await metadata(server)).toMatchObject({
        issuer: `http://127.0.0.1:${port}`,
        token_endpoint: `http://127.0.0.1:${port}/oauth/token`,
      });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  describe('openid-client discovery against a server on any PORT, with nothing else set', () => {
    let server: ServerProcess;
    let serverDir: string;
    let issuer: URL;
    let client: { client_id: string; client_secret: string };
    beforeAll(async () => {
      serverDir = mkdtempSync(join(tmpdir(), 'company-api-oidc-'));
      const env = {
        DATABASE_URL: `sqlite:${join(serverDir, 'app.sqlite')}`,
        TOKEN_ISSUER: undefined,
        // The default wildcard HOST: the issuer names localhost.
        HOST: undefined,
      };
      server = await startServer(env);
      issuer = new URL(`http://localhost:${new URL(server.baseUrl).port}`);
      const created = await runNode(
        'dist/src/cli.js',
        ['clients:create', '--name', 'oidc', '--scopes', 'customers:read webhooks:read'],
        env,
      );
      expect(created.code).toBe(0);
      client = JSON.parse(created.stdout);
    });
    afterAll(async () => {
      expect(await server.stop()).toBe(0);
      rmSync(serverDir, { recursive: true, force: true });
    });

    const discover = (auth: 'basic' | 'post') =>
      oidc.discovery(
        issuer,
        client.client_id,
        undefined,
        auth === 'basic'
          ? oidc.ClientSecretBasic(client.client_secret)
          : oidc.ClientSecretPost(client.client_secret),
        { algorithm: 'oauth2', execute: [oidc.allowInsecureRequests] },
      );

    it.each(['basic', 'post'] as const)(
      'client_credentials (client_secret_%s), introspection and revocation',
      async (auth) => {
        const config = await discover(auth);
        expect(config.serverMetadata().issuer).toBe(issuer.href.replace(/\/$/, ''));

        const tokens = await oidc.clientCredentialsGrant(config, { scope: 'customers:read' });
        expect(tokens.token_type).toBe('bearer');
        expect(tokens.scope).toBeUndefined();

        const active = await oidc.tokenIntrospection(config, tokens.access_token);
        expect(active).toMatchObject({
          active: true,
          client_id: client.client_id,
          scope: 'customers:read',
          iss: config.serverMetadata().issuer,
        });

        await oidc.tokenRevocation(config, tokens.access_token);
        expect(await oidc.tokenIntrospection(config, tokens.access_token)).toEqual({
          active: false,
        });
      },
    );
  });

  it('the CLI revokes a token signed by our key whatever issuer it names', async () => {
    const database = `sqlite:${join(dir, 'app.sqlite')}`;
    const port = await freePort();
    // Issued while the server ran under one issuer…
    const server = await startServer({ DATABASE_URL: database, TOKEN_ISSUER: undefined });
    let token: string;
    try {
      const created = await runNode(
        'dist/src/cli.js',
        ['clients:create', '--name', 'x', '--scopes', 'customers:read'],
        { DATABASE_URL: database },
      );
      const client = JSON.parse(created.stdout);
      const res = await fetch(`${server.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'client_credentials',
          scope: 'customers:read',
          ...client,
        }),
      });
      token = ((await res.json()) as { access_token: string }).access_token;
    } finally {
      expect(await server.stop()).toBe(0);
    }
    // …revoked by a CLI whose configuration names another one.
    const revoked = await runNode('dist/src/cli.js', ['tokens:revoke', '--token', token], {
      DATABASE_URL: database,
      PORT: String(port),
      TOKEN_ISSUER: undefined,
    });
    expect(revoked.stderr).toBe('');
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ revoked: true });
  });
});
