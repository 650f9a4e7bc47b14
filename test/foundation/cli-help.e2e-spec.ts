import { jest } from '@jest/globals';
import { commands } from '../../src/cli/commands.js';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { runNode } from '../support/processes.js';

// Each test runs the built CLI as a separate process, seconds each on a busy machine.
jest.setTimeout(60000);

/** README "CLI": help is a success on stdout; a mistake is usage on stderr and exit 2. */
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
      for (const command of commands) expect(result.stdout).toContain(`  ${command.usage}\n`);
    },
  );

  it.each([
    ['clients:create', '--help'],
    ['help', 'clients:create'],
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
          'Registers an OAuth client; prints its id and its secret (shown this once).\n',
      });
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

  it('users:create takes a password of 8 characters', async () => {
    const result = await cli('users:create', '--username', 'bea', '--password', 'eight888');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ id: expect.any(Number), username: 'bea' });
  });
});
