import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type CliCommand, CliUsageError } from './cli/cli-command.js';
import { loadEnvFile, validateEnvironment } from './config/environment.js';

// Logs go to stderr so that stdout holds exactly one JSON object; only warnings unless asked for
// in the real environment (set before .env is read, so the server's LOG_LEVEL there does not apply).
process.env.LOG_DESTINATION = 'stderr';
process.env.LOG_LEVEL ??= 'warn';
// Same configuration as the server: a CLI writing to another database than the server is a trap.
try {
  loadEnvFile();
} catch (error) {
  // An unreadable line: one line, as a bad variable is (validateEnvironment()).
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
}

const HELP = new Set(['--help', '-h']);

async function main(argv: string[]): Promise<number> {
  const { commands } = await import('./cli/commands.js');
  const usage = () =>
    `Usage: npm run cli -- <command> [flags]\n       npm run cli -- <command> --help\n\nCommands:\n${commands
      .map((c) => `  ${c.usage}\n      ${c.description}`)
      .join('\n')}\n`;
  const commandUsage = (c: CliCommand) => {
    const flags = Object.keys(c.options).map((name) => [`--${name}`, c.flags?.[name] ?? '']);
    const width = Math.max(0, ...flags.map(([flag]) => flag.length));
    const options = flags.length
      ? `\nOptions:\n${flags.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}\n`).join('')}`
      : '';
    return `Usage: npm run cli -- ${c.usage}\n\n${c.description}\n${c.help ? `\n${c.help}\n` : ''}${options}`;
  };
  const find = (name: string | undefined) => commands.find((c) => c.name === name);

  const [name, ...rest] = argv;
  // No command at all is a mistake, not a request: usage on stderr.
  if (name === undefined) {
    process.stderr.write(usage());
    return 2;
  }
  // `--help`, `help`, `help <command>`: asked for, so stdout and success.
  if (HELP.has(name) || name === 'help') {
    // `help clients:create` and `--help clients:create` alike.
    const topic = rest[0];
    if (topic === undefined) {
      process.stdout.write(usage());
      return 0;
    }
    const about = find(topic);
    if (!about) {
      process.stderr.write(`Unknown command: ${topic}\n\n${usage()}`);
      return 2;
    }
    process.stdout.write(commandUsage(about));
    return 0;
  }
  const command = find(name);
  if (!command) {
    process.stderr.write(`Unknown command: ${name}\n\n${usage()}`);
    return 2;
  }
  if (rest.some((arg) => HELP.has(arg))) {
    process.stdout.write(commandUsage(command));
    return 0;
  }
  let values;
  try {
    const parsed = parseArgs({ args: rest, options: command.options, strict: true, tokens: true });
    // parseArgs keeps the last of repeated flags; silently dropping one is a trap.
    const seen = new Set<string>();
    for (const token of parsed.tokens) {
      if (token.kind !== 'option') continue;
      if (seen.has(token.name) && !command.options[token.name]?.multiple) {
        throw new CliUsageError(`--${token.name} is given more than once.`);
      }
      seen.add(token.name);
    }
    values = parsed.values;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${commandUsage(command)}`);
    return 2;
  }

  const env = validateEnvironment(process.env);
  // Every command opens the database, db:status (context 'env') too: it made a missing SQLite
  // file as silently as a mistyped path, and then listed every migration as pending.
  await sayWhenNewDatabase(env.DATABASE_URL);
  const app =
    command.context === 'app'
      ? await NestFactory.createApplicationContext((await import('./app.module.js')).AppModule, {
          bufferLogs: true,
          // A failure (a database that cannot be reached) is thrown to the `{"error":…}` line
          // below, as main.ts does, instead of Nest printing its buffered lines on stdout and a
          // stack trace, then exiting on its own.
          abortOnError: false,
          autoFlushLogs: false,
        })
      : undefined;
  // Nest's own logger prints warnings on stdout, after the command's JSON (seen when an instance's
  // warning landed while the CLI shut down): the service's logger writes to stderr here.
  const { AppLogger } = await import('./logging/app-logger.js');
  app?.useLogger(app.get(AppLogger));
  app?.flushLogs();
  try {
    const result = await command.run({ app, env, values });
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return command.exitCode?.(result) ?? 0;
  } catch (error) {
    if (error instanceof CliUsageError) {
      process.stderr.write(`${error.message}\n\n${commandUsage(command)}`);
      return 2;
    }
    throw error;
  } finally {
    await app?.close();
  }
}

/**
 * A SQLite file that is not there yet is made by the command (a first run, before `npm start`),
 * but so is one at a mistyped path: a client created there is unknown to the server. Said on
 * stderr, naming the file; the command goes on.
 */
async function sayWhenNewDatabase(url: string) {
  const { sqliteFile } = await import('./database/index.js');
  const path = sqliteFile(url);
  if (path === undefined || existsSync(path)) return;
  process.stderr.write(
    `No database at ${path}: a new one is made there. If the server uses another, check DATABASE_URL.\n`,
  );
}

/**
 * Exits once stdout and stderr have taken everything written: on a pipe they write
 * asynchronously, and process.exit() would cut a long output (a replay's summary) short.
 */
function exitAfterOutput(code: number) {
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}

main(process.argv.slice(2)).then(exitAfterOutput, async (error: unknown) => {
  // Loaded only on failure: it brings the ORM, which `--help` does not need.
  const { cliErrorMessage } = await import('./cli/cli-errors.js');
  process.stderr.write(`${JSON.stringify({ error: cliErrorMessage(error) })}\n`);
  exitAfterOutput(1);
});
