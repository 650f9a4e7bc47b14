import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { runNode, startServer } from '../support/processes.js';

/** The built server and CLI as a user runs them (npm test builds dist/ first). */
describe('start-up and CLI', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('refuses a bad variable with one line naming it, and exit code 1', async () => {
    const result = await runNode('dist/src/main.js', [], { PORT: 'abc' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'Invalid configuration: PORT must be an integer from 1 to 65535 (got "abc")',
    );
  });

  it('creates the SQLite folder and file on first start and serves /health', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'company-api-start-'));
    const file = join(dir, 'nested', 'app.sqlite');
    const server = await startServer({ DATABASE_URL: `sqlite:${file}` });
    try {
      expect(existsSync(file)).toBe(true);
      const res = await fetch(`${server.baseUrl}/health/ready`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ok', database: 'up' });
    } finally {
      expect(await server.stop()).toBe(0);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('db:status lists applied and pending migrations as one JSON object', async () => {
    const before = await runNode('dist/src/cli.js', ['db:status'], { DATABASE_URL: database.url });
    expect(before.code).toBe(0);
    const status = JSON.parse(before.stdout);
    expect(status.applied).toEqual([]);
    expect(status.pending.length).toBeGreaterThan(0);
    expect(before.stdout.trim().split('\n')).toHaveLength(1);
  });

  it('answers an unknown command or flag with usage on stderr and exit 2', async () => {
    const unknown = await runNode('dist/src/cli.js', ['nope'], { DATABASE_URL: database.url });
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/Unknown command: nope[\s\S]*Usage: npm run cli -- <command>/);

    const badFlag = await runNode('dist/src/cli.js', ['db:status', '--bogus'], {
      DATABASE_URL: database.url,
    });
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/bogus/);
  });
});
