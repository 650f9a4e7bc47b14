import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { InvalidEnvironmentError, loadEnvFile, validateEnvironment } from './config/environment.js';

async function main() {
  // Validate before Nest starts so a bad variable is one line, not a stack trace.
  loadEnvFile();
  const env = validateEnvironment(process.env);
  const { AppModule } = await import('./app.module.js');
  const { configureApp, createAdapter } = await import('./bootstrap.js');
  const app = await NestFactory.create<NestFastifyApplication>(AppModule, createAdapter(env), {
    bufferLogs: true,
    bodyParser: false,
  });
  await configureApp(app, env);
  await app.listen({ port: env.PORT, host: env.HOST });

  // Graceful stop: refuse new connections, finish in-flight requests, close the database, exit 0.
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => {
      process.stderr.write(`Shutdown after ${signal} took over 10 s; exiting.\n`);
      process.exit(1);
    }, 10_000);
    force.unref();
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  const message =
    error instanceof InvalidEnvironmentError
      ? error.message
      : `Start-up failed: ${error instanceof Error ? error.message : String(error)}`;
  process.stderr.write(`${message}\n`);
  process.exit(1);
});
