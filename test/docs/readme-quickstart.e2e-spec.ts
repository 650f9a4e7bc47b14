import { jest } from '@jest/globals';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { ROOT, spawnChild, startServer, type ServerProcess } from '../support/processes.js';

// The quick start runs the built CLI (through npm) twice and curl six times: seconds each on a
// busy machine.
jest.setTimeout(300000);

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const README = read('README.md');
const DOCS = readdirSync(join(ROOT, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);

/** The address the README's examples use; the test puts its own server's in its place. */
const README_ADDRESS = 'http://localhost:3000';
/** A line of a quick-start block that shows what the command before it prints. */
const SHOWN = /^# -> (.*)$/;

/** The ```bash blocks that follow a `<!-- quickstart … -->` comment, in order. */
function quickstartBlocks(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/<!-- quickstart\b[^]*?-->\n+```bash\n([^]*?)\n```/g)];
  return blocks.map((match) => match[1]);
}

/** A shown answer as a pattern: exact, but for `…`, which stands for anything on that line. */
function shownPattern(shown: string): RegExp {
  const parts = shown.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*?')}$`);
}

/** Runs a script with bash, stopping at the first command that fails. */
async function bash(script: string, env: Record<string, string>) {
  const child = spawnChild('bash', ['-c', `set -euo pipefail\n${script}`], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/**
 * README "Quick start", as a reader pastes it: the marked block runs with bash (from the
 * repository, as `npm run cli` needs) against a server started on a fresh database (SQLite, or
 * PostgreSQL when TEST_DATABASE_URL is set), `http://localhost:3000` replaced by that server's
 * address and DATABASE_URL pointing the CLI at its database. Every command must succeed and
 * print exactly the lines the README shows after it (`# -> …`).
 */
describe('README quick start', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  beforeAll(async () => {
    database = await createTestDatabase();
    server = await startServer({ DATABASE_URL: database.url });
  });
  afterAll(async () => {
    await server?.stop();
    await database?.drop();
  });

  it('has a marked block that shows what its commands print', () => {
    const blocks = quickstartBlocks(README);
    expect(blocks).toHaveLength(1);
    const shown = blocks[0].split('\n').filter((line) => SHOWN.test(line));
    // seed, GET, PUT 422, PUT 200, a page, a webhook
    expect(shown).toHaveLength(6);
    expect(blocks[0]).toContain(README_ADDRESS);
  });

  it('runs as written on an empty database, and prints what the README shows', async () => {
    const [block] = quickstartBlocks(README);
    const shown = block
      .split('\n')
      .map((line) => SHOWN.exec(line)?.[1])
      .filter((line) => line !== undefined);
    const result = await bash(block.replaceAll(README_ADDRESS, server.baseUrl), {
      DATABASE_URL: database.url,
    });
    const printed = result.stdout.split('\n').filter((line) => line !== '');
    // A command that failed shows its error output in the difference.
    const stderr = result.code === 0 ? '' : result.stderr;
    expect({ code: result.code, printed, stderr }).toEqual({
      code: 0,
      printed: shown.map((line) => expect.stringMatching(shownPattern(line))),
      stderr: '',
    });
  });
});

/** What else in README.md and docs/ can go stale without a test noticing. */
describe('README and docs/', () => {
  it('README.md stays under 250 lines and docs/benchmarks.md under 200', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(250);
    expect(read('docs/benchmarks.md').split('\n').length).toBeLessThanOrEqual(200);
  });

  it('README.md gives the two commands', () => {
    expect(README).toContain('npm install && npm start');
    expect(README).toContain('npm install && npm test');
  });

  it('the configuration table lists every variable of the environment and of .env.example, once', () => {
    const section = README.split('\n## Configuration\n')[1].split('\n## ')[0];
    const rows = section.split('\n').filter((line) => line.startsWith('|'));
    expect(rows.filter((row) => /^\|[\s|:-]+\|$/.test(row))).toHaveLength(1);
    const inTable = rows.flatMap((row) => /^\| `([A-Z][A-Z0-9_]+)`/.exec(row)?.[1] ?? []);
    const inCode = [
      ...read('src/config/environment.ts').matchAll(/^ {2}([A-Z][A-Z0-9_]+)[?!]?(?::|\s*=)/gm),
    ].map((match) => match[1]);
    const inExample = [...read('.env.example').matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map(
      (match) => match[1],
    );
    expect(inTable.length).toBe(new Set(inTable).size);
    expect([...inTable].sort()).toEqual([...inCode].sort());
    expect([...inTable].sort()).toEqual([...new Set(inExample)].sort());
  });

  it.each(['README.md', ...DOCS])(
    '%s links only to files in the repository, and every file it names exists',
    (path) => {
      const text = read(path);
      expect(text).not.toMatch(/\.\.\/shared|\/work\//);
      const links = [...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
        .map((match) => match[1])
        .filter((target) => !/^[a-z]+:/.test(target));
      const named = [...text.matchAll(/`((?:src|test|bench|scripts|docs)\/[\w./-]+\.\w+)`/g)].map(
        (match) => match[1],
      );
      for (const target of links) {
        const file = resolve(ROOT, dirname(path), target);
        expect({ path, target, inside: !relative(ROOT, file).startsWith('..') }).toEqual({
          path,
          target,
          inside: true,
        });
        expect({ path, target, exists: existsSync(file) }).toEqual({ path, target, exists: true });
      }
      for (const file of named) {
        expect({ path, file, exists: existsSync(join(ROOT, file)) }).toEqual({
          path,
          file,
          exists: true,
        });
      }
    },
  );
});
