import { Logger } from '@nestjs/common';
import { Writable } from 'node:stream';
import pino from 'pino';
import { loggerOptions } from '../config/logger.config.js';
import { AppLogger } from './app-logger.js';

describe('AppLogger (Nest LoggerService on pino)', () => {
  let lines: Record<string, unknown>[];
  let logger: AppLogger;
  beforeEach(() => {
    lines = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    logger = new AppLogger(pino(loggerOptions({ LOG_LEVEL: 'debug' }), sink));
  });
  const fields = () =>
    lines.map(({ level, msg, context, reqId, err, stack, password }) => ({
      level,
      msg,
      context,
      reqId,
      err: (err as { message?: string } | undefined)?.message,
      stack,
      password,
    }));

  it("writes Nest's own progress lines at debug", () => {
    logger.log('AppModule dependencies initialized', 'InstanceLoader');
    logger.log('Mapped {/health, GET} route', 'RouterExplorer');
    expect(fields().map(({ level, context }) => ({ level, context }))).toEqual([
      { level: 20, context: 'InstanceLoader' },
      { level: 20, context: 'RouterExplorer' },
    ]);
  });

  it('writes Nest calls as pino lines: context, merged objects, errors and stacks', () => {
    logger.log('started', 'Bootstrap');
    logger.warn({ reqId: 'r-1', password: 'hunter2' }, 'database unavailable', 'ExceptionsFilter');
    logger.error(new Error('boom'), 'Handler');
    logger.error('failed', 'Error: failed\n    at x', 'Handler');
    logger.verbose('fine detail', 'X'); // trace: below the debug level, not written
    expect(fields()).toEqual([
      { level: 30, msg: 'started', context: 'Bootstrap' },
      {
        level: 40,
        msg: 'database unavailable',
        context: 'ExceptionsFilter',
        reqId: 'r-1',
        password: '[redacted]',
      },
      { level: 50, msg: 'boom', context: 'Handler', err: 'boom' },
      { level: 50, msg: 'failed', context: 'Handler', stack: 'Error: failed\n    at x' },
    ]);
  });

  it('serves `new Logger(Context)` once installed as Nest’s logger', () => {
    Logger.overrideLogger(logger);
    try {
      new Logger('TokenStateService').warn({ err: new Error('gone') }, 'could not reload');
    } finally {
      Logger.overrideLogger(false);
    }
    expect(fields()).toEqual([
      { level: 40, msg: 'could not reload', context: 'TokenStateService', err: 'gone' },
    ]);
  });
});
