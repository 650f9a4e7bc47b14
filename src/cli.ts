import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { parseArgs } from 'node:util';
import { CliUsageError } from './cli/cli-command.js';
import { InvalidEnvironmentError, loadEnvFile, validateEnvironment } from './config/environment.js';

// Logs go to stderr so that stdout holds exactly one JSON object; only warnings unless asked for
// in the real environment (set before .env is read, so the server's LOG_LEVEL there does not apply).
process.env.LOG_DESTINATION = 'stderr';
process.env.LOG_LEVEL ??= 'warn';
// Same configuration as the server: a CLI writing to another database than the server is a trap.
loadEnvFile();

async function main(argv: string[]): Promise<number> {
  const { commands } = await import('./cli/commands.js');
  const usage = () =>
    `Usage: npm run cli -- <command> [flags]\n\nCommands:\n${commands
      .map((c) => `  ${c.usage}`)
      .join('\n')}\n`;
  const [name, ...rest] = argv;
  const command = commands.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`${name ? `Unknown command: ${name}\n\n` : ''}${usage()}`);
    return 2;
  }
  let values;
  try {
    ({ values } = parseArgs({ args: rest, options: command.options, strict: true }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\nUsage: npm run cli -- ${command.usage}\n`);
    return 2;
  }

  const env = validateEnvironment(process.env);
  const app =
    command.context === 'app'
      ? await NestFactory.createApplicationContext((await import('./app.module.js')).AppModule, {
          logger: ['error', 'warn'],
        })
      : undefined;
  try {
    const result = await command.run({ app, env, values });
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof CliUsageError) {
      process.stderr.write(`${error.message}\n\nUsage: npm run cli -- ${command.usage}\n`);
      return 2;
    }
    throw error;
  } finally {
    await app?.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message =
      error instanceof InvalidEnvironmentError
        ? error.message
        : String((error as Error)?.message ?? error);
    process.stderr.write(`${JSON.stringify({ error: message })}\n`);
    process.exit(1);
  },
);
