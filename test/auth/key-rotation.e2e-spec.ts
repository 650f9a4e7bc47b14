import { jest } from '@jest/globals';
import { decodeProtectedHeader } from 'jose';
import { generateKeyPairSync } from 'node:crypto';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { runNode, ServerProcess, startServer } from '../support/processes.js';

// Two server processes and several CLI runs, seconds each on a busy machine.
jest.setTimeout(180000);

/** Key rotation across instances (CONTRACT §3), on two server processes sharing one database. */
describe('signing key rotation', () => {
  let database: TestDatabase;
  const servers: ServerProcess[] = [];
  let client: { client_id: string; client_secret: string };

  const cli = async (args: string[], env: Record<string, string> = {}) =>
    runNode('dist/src/cli.js', args, { DATABASE_URL: database.url, ...env });
  const cliJson = async (...args: string[]) => {
    const result = await cli(args);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(result.stdout);
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = { DATABASE_URL: database.url, TOKEN_ISSUER: 'http://localhost:3000' };
    // One after the other: the first applies the migrations and makes the first key.
    servers.push(await startServer(env));
    servers.push(await startServer(env));
    client = await cliJson('clients:create', '--name', 'rotating', '--scopes', 'customers:read');
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await database.drop();
  });

  const tokenFrom = async (server: ServerProcess) => {
    const res = await fetch(`${server.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: client.client_id,
        client_secret: client.client_secret,
        scope: 'customers:read',
      }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { access_token: string }).access_token;
  };
  const kidOf = (token: string) => decodeProtectedHeader(token).kid;
  const pem = () =>
    generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const statusAt = async (server: ServerProcess, token: string) =>
    (
      await fetch(`${server.baseUrl}/v2/customers`, {
        headers: { authorization: `Bearer ${token}` },
      })
    ).status;
  const jwksKids = async (server: ServerProcess) =>
    (
      (await (await fetch(`${server.baseUrl}/.well-known/jwks.json`)).json()) as {
        keys: { kid: string }[];
      }
    ).keys
      .map((k) => k.kid)
      .sort();
  /** Polls (every instance refreshes its keys twice a second) until `check` holds. */
  const eventually = async (check: () => Promise<boolean>) => {
    const deadline = Date.now() + 5000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('condition not met within 5 s');
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it('rotate: new tokens carry the new kid everywhere; old and new verify on both; retire: old refused by both', async () => {
    const [a, b] = servers;
    const old = await tokenFrom(a);
    const oldKid = kidOf(old)!;
    expect(kidOf(await tokenFrom(b))).toBe(oldKid);

    const rotated = await cliJson('keys:rotate');
    expect(rotated).toEqual({ kid: expect.any(String), previous_kid: oldKid });
    const newKid: string = rotated.kid;
    expect(newKid).not.toBe(oldKid);

    await eventually(async () => kidOf(await tokenFrom(a)) === newKid);
    await eventually(async () => kidOf(await tokenFrom(b)) === newKid);
    const fresh = [await tokenFrom(a), await tokenFrom(b)];
    for (const server of servers) {
      expect(await jwksKids(server)).toEqual([oldKid, newKid].sort());
      for (const token of [old, ...fresh]) expect(await statusAt(server, token)).toBe(200);
    }

    const listed = await cliJson('keys:list');
    expect(listed.keys).toEqual([
      expect.objectContaining({ kid: oldKid, state: 'verifying', retired_at: null }),
      expect.objectContaining({ kid: newKid, state: 'signing', retired_at: null }),
    ]);

    // The signing key cannot be retired; an unknown kid is an error; neither changes anything.
    for (const kid of [newKid, 'no-such-kid']) {
      const refused = await cli(['keys:retire', `--kid=${kid}`]);
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stderr.trim().split('\n').pop()!)).toEqual({
        error: expect.any(String),
      });
    }

    const retired = await cliJson('keys:retire', `--kid=${oldKid}`);
    expect(retired).toEqual({ kid: oldKid, retired_at: expect.any(String) });
    for (const server of servers) {
      await eventually(async () => (await statusAt(server, old)) === 401);
      expect(await jwksKids(server)).toEqual([newKid]);
      for (const token of fresh) expect(await statusAt(server, token)).toBe(200);
    }
    expect((await cliJson('keys:list')).keys).toEqual([
      expect.objectContaining({ kid: oldKid, state: 'retired', retired_at: expect.any(String) }),
      expect.objectContaining({ kid: newKid, state: 'signing' }),
    ]);
  });

  it("with TOKEN_SIGNING_KEY set, rotation is the operator's: keys:rotate says so and changes nothing", async () => {
    const before = (await cliJson('keys:list')).keys;
    const result = await cli(['keys:rotate'], { TOKEN_SIGNING_KEY: pem() });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("TOKEN_SIGNING_KEY is set: key rotation is the operator's");
    expect((await cliJson('keys:list')).keys).toEqual(before);
  });

  it('with TOKEN_SIGNING_KEY set, every database key only verifies and can be retired; a start without it then makes a new key', async () => {
    const signing = (await cliJson('keys:list')).keys.find(
      (key: { state: string }) => key.state === 'signing',
    );
    const configured = pem();
    const retired = await cli(['keys:retire', `--kid=${signing.kid}`], {
      TOKEN_SIGNING_KEY: configured,
    });
    expect({ code: retired.code, stderr: retired.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(retired.stdout)).toEqual({
      kid: signing.kid,
      retired_at: expect.any(String),
    });
    for (const server of servers) {
      await eventually(async () => !(await jwksKids(server)).includes(signing.kid));
    }

    // Without the variable, a retired key never signs again: a new one is made and signs.
    const keys = (await cliJson('keys:list')).keys;
    expect(keys).toContainEqual(expect.objectContaining({ kid: signing.kid, state: 'retired' }));
    const fresh = keys.filter((key: { state: string }) => key.state === 'signing');
    expect(fresh).toEqual([expect.objectContaining({ source: 'database' })]);
    expect(fresh[0].kid).not.toBe(signing.kid);
    for (const server of servers) {
      await eventually(async () => (await jwksKids(server)).includes(fresh[0].kid));
      const token = await tokenFrom(server);
      expect(kidOf(token)).toBe(fresh[0].kid);
      expect(await statusAt(server, token)).toBe(200);
    }
  });
});
