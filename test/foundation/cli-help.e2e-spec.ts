import { jest } from '@jest/globals';
import { commands } from '../../src/cli/commands.js';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { runNode } from '../support/processes.js';

// Each test runs the built CLI as a separate process, seconds each on a busy machine.
jest.setTimeout(60000);

/** docs/operations.md "The CLI": help is a success on stdout; a mistake is usage on stderr and exit 2. */
describe('CLI usage', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });
  const cli = (...args: string[]) =>
    runNode('dist/src/cli.js', args, { DATABASE_URL: database.url });

  it.each([['--help'], ['-h'], ['help']])(
    '`%s` lists every registered command on stdout, exit 0',
    async (flag) => {
      const result = await cli(flag);
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      expect(result.stdout).toMatch(/^Usage: npm run cli -- <command> \[flags\]\n/);
      for (const command of commands) {
        expect(result.stdout).toContain(`  ${command.usage}\n      ${command.description}\n`);
      }
    },
  );

  it.each([
    ['clients:create', '--help'],
    ['help', 'clients:create'],
    ['--help', 'clients:create'],
    ['clients:create', '--name', 'x', '-h'],
  ])(
    '`%s %s` prints that command’s usage on stdout, exit 0, and does nothing else',
    async (...args) => {
      const result = await cli(...args);
      expect(result).toEqual({
        code: 0,
        stderr: '',
        stdout:
          'Usage: npm run cli -- clients:create --name <name> --scopes "<s1 s2>" [--grants client_credentials,password]\n\n' +
          'Registers an OAuth client; prints its id and its secret (shown this once).\n\n' +
          'Options:\n' +
          '  --name    A name for people (at most 255 characters, no control characters).\n' +
          '  --scopes  Scopes the client may request, separated by spaces or commas: customers:read, customers:write, webhooks:read, webhooks:write.\n' +
          '  --grants  Grants the client may use, comma-separated (default: client_credentials).\n',
      });
    },
  );

  it('every command has a description, and every option of it a description', () => {
    for (const command of commands) {
      expect({ command: command.name, description: command.description.trim() }).toEqual({
        command: command.name,
        description: expect.stringMatching(/^\S.{9,}$/),
      });
      const options = Object.keys(command.options).sort();
      const described = Object.entries(command.flags ?? {})
        .filter(([, text]) => text.trim().length >= 10)
        .map(([name]) => name)
        .sort();
      expect({ command: command.name, options }).toEqual({
        command: command.name,
        options: described,
      });
    }
  });

  it.each(commands.map((command) => [command.name, command] as const))(
    '`%s --help` prints its usage, description and options on stdout, exit 0',
    async (name, command) => {
      const result = await cli(name, '--help');
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      expect(result.stdout).toMatch(
        new RegExp(
          `^Usage: npm run cli -- ${escape(command.usage)}\n\n${escape(command.description)}\n`,
        ),
      );
      for (const [flag, text] of Object.entries(command.flags ?? {})) {
        expect(result.stdout).toMatch(new RegExp(`\n  --${escape(flag)} +${escape(text)}\n`));
      }
    },
  );

  it('no command, an unknown command or `help` of one: usage on stderr, exit 2', async () => {
    for (const args of [[], ['nope'], ['help', 'nope']]) {
      const result = await cli(...args);
      expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 2, stdout: '' });
      expect(result.stderr).toMatch(/Usage: npm run cli -- <command> \[flags\]/);
    }
  });

  it.each([
    [
      ['clients:create', '--name', 'a', '--name', 'b', '--scopes', 'customers:read'],
      '--name is given more than once.',
    ],
    [
      ['clients:create', '--name=a', '--scopes', 'customers:read', '--scopes=webhooks:read'],
      '--scopes is given more than once.',
    ],
    [['clients:create', '--bogus'], "Unknown option '--bogus'"],
    [
      ['users:create', '--username', 'ann', '--password', 'seven77'],
      '--password must be at least 8 characters.',
    ],
  ])('%j is refused with usage on stderr, exit 2', async (args, message) => {
    const result = await cli(...args);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 2, stdout: '' });
    expect(result.stderr.startsWith(message)).toBe(true);
    expect(result.stderr).toContain(`\n\nUsage: npm run cli -- ${args[0]} `);
  });

  it.each([
    [
      'a database that does not exist',
      'postgres://postgres:DbPw_S3cret@127.0.0.1:5432/no_such_database_test',
      /^database "no_such_database_test" does not exist$/,
    ],
    [
      'a port nothing listens on',
      'postgres://postgres:DbPw_S3cret@127.0.0.1:1/x',
      /^connect ECONNREFUSED 127\.0\.0\.1:1$/,
    ],
  ])('%s: one {"error":…} line on stderr, nothing on stdout, exit 1', async (_what, url, error) => {
    const result = await runNode('dist/src/cli.js', ['keys:list'], { DATABASE_URL: url });
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: '' });
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]).error).toMatch(error);
    expect(result.stderr).not.toContain('S3cret');
  });

  it('users:create takes a password of 8 characters', async () => {
    const result = await cli('users:create', '--username', 'bea', '--password', 'eight888');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ id: expect.any(Number), username: 'bea' });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
