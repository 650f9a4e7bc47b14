import { Global, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Logger } from 'pino';
import type { Environment } from '../config/environment.js';
import { createRootLogger } from '../config/logger.config.js';
import { AppLogger } from './app-logger.js';

/** Injection token of the root pino logger. */
export const ROOT_LOGGER = Symbol('root-logger');

/**
 * One pino logger for the whole service. Requests are logged by a Fastify onResponse hook
 * (request-log.ts), not by an HTTP middleware: Nest middleware on Fastify runs through middie and
 * an AsyncLocalStorage context per request, which cost about a tenth of a simple request's time.
 */
@Global()
@Module({
  providers: [
    {
      provide: ROOT_LOGGER,
      inject: [ConfigService],
      useFactory: (config: ConfigService<Environment, true>): Logger =>
        createRootLogger({ LOG_LEVEL: config.get('LOG_LEVEL', { infer: true }) }),
    },
    {
      provide: AppLogger,
      inject: [ROOT_LOGGER],
      useFactory: (root: Logger) => new AppLogger(root),
    },
  ],
  exports: [ROOT_LOGGER, AppLogger],
})
export class LoggingModule {}
