import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { ListenFailure } from './common/listen-failure.js';
import { Database, databaseForLog } from './database/index.js';
import {
  type Environment,
  InvalidEnvironmentError,
  loadEnvFile,
  validateEnvironment,
} from './config/environment.js';
import { exitOnceLogged, listenAddress, startedLine } from './logging/lifecycle-log.js';

/** A start-up failure, already worded as the one line the operator reads. */
class StartupError extends Error {}

async function main() {
  loadEnvFile();
  // Validate before Nest starts so a bad variable is one line, not a stack trace.
  const env = validateEnvironment(process.env);
  // Every failure while the app is loaded, built and initialised is reported with the database it
  // uses, which is what fails most often (unreachable, missing, unwritable).
  const app = await buildApp(env).catch((error: unknown) => {
    throw new StartupError(
      error instanceof ListenFailure
        ? `Start-up failed: ${error.message}`
        : `Start-up failed (database ${databaseForLog(env.DATABASE_URL)}): ${messageOf(error)}`,
    );
  });
  const { ROOT_LOGGER } = await import('./logging/logging.module.js');
  const logger = app.get<Logger>(ROOT_LOGGER);
  // Read before listening, so that nothing (a request, a signal) comes between listening and
  // saying so.
  const started = await startedLine(env, app.get(Database));

  // Graceful stop: refuse new connections, finish in-flight requests, close the database, exit 0.
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `stopping (${signal}): finishing requests in flight`);
    // Exit once the log lines are written: the `stopped` line is the last thing an operator sees.
    let exiting = false;
    const exit = (code: number) => {
      if (exiting) return;
      exiting = true;
      clearTimeout(force);
      exitOnceLogged(logger, code);
    };
    const force = setTimeout(() => {
      logger.error({ signal }, `stop after ${signal} took over 10 s; exiting`);
      exit(1);
    }, 10_000);
    force.unref();
    // A request still in flight after 8 s is one its client will not finish (a body or a head
    // stalled half-way; a handler's own work is bounded by the 3 s statement limit): its
    // connection is cut, so that the server closes, then the database, and the stop ends clean
    // (exit 0) within the 10 s rather than at the watchdog above.
    const cut = setTimeout(() => app.getHttpServer().closeAllConnections(), 8_000);
    cut.unref();
    app.close().then(
      () => {
        logger.info('stopped');
        exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, `stop failed: ${messageOf(error)}`);
        exit(1);
      },
    );
  };
  // Before listening: a signal that arrives as soon as the port is open still stops gracefully.
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);

  await app.listen({ port: env.PORT, host: env.HOST }).catch((error: unknown) => {
    throw new StartupError(
      `Start-up failed: cannot listen on ${listenAddress(env)} (PORT, HOST): ${messageOf(error)}`,
    );
  });
  logger.info(started.fields, started.message);
}

async function buildApp(env: Environment) {
  // Loaded only now: ConfigModule validates process.env when app.module is first evaluated.
  const { AppModule } = await import('./app.module.js');
  const { configureApp, createAdapter } = await import('./bootstrap.js');
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, createAdapter(env), {
    bufferLogs: true,
    // A failure is thrown to main's catch (one line) instead of Nest printing the buffered lines
    // and a stack trace, then exiting on its own.
    abortOnError: false,
    autoFlushLogs: false,
    bodyParser: false,
  });
  await configureApp(app, env);
  await app.init();
  return app;
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // Some drivers' messages span lines; the failure stays one line.
  return message.replace(/\s*\n\s*/g, ' ').trim() || (error as Error)?.name || 'unknown error';
}

main().catch((error: unknown) => {
  const message =
    error instanceof InvalidEnvironmentError || error instanceof StartupError
      ? error.message
      : `Start-up failed: ${messageOf(error)}`;
  process.stderr.write(`${message}\n`);
  process.exit(1);
});
