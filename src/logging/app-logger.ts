import type { LoggerService } from '@nestjs/common';
import type { Level, Logger } from 'pino';

/**
 * Nest's own progress lines (a module initialised, a route mapped, the app started): about 40 at
 * every start, which say nothing an operator needs; the service's one start line does (main.ts).
 */
const FRAMEWORK_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
]);

/**
 * Nest's LoggerService on the root pino logger, so that `new Logger(Context)` anywhere in the app
 * writes the same JSON lines as the request log. Nest calls `log(message, ...params, context)`;
 * an object message is merged into the line (`logger.warn({ err, reqId }, 'text')`), an Error
 * becomes `err`, and Nest's `error(message, stack, context)` keeps the stack.
 */
export class AppLogger implements LoggerService {
  constructor(private readonly pino: Logger) {}

  log(message: unknown, ...params: unknown[]) {
    this.write(FRAMEWORK_CONTEXTS.has(params.at(-1) as string) ? 'debug' : 'info', message, params);
  }
  error(message: unknown, ...params: unknown[]) {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]) {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]) {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]) {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]) {
    this.write('fatal', message, params);
  }

  private write(level: Level, message: unknown, params: unknown[]) {
    if (!this.pino.isLevelEnabled(level)) return;
    const rest = [...params];
    // Nest appends the logger's context as the last string parameter.
    const context =
      rest.length > 0 && typeof rest[rest.length - 1] === 'string'
        ? (rest.pop() as string)
        : undefined;
    const fields: Record<string, unknown> = context ? { context } : {};
    let text: string | undefined;
    if (message instanceof Error) {
      fields.err = message;
    } else if (typeof message === 'object' && message !== null) {
      Object.assign(fields, message);
    } else {
      text = String(message);
    }
    for (const param of rest) {
      if (param instanceof Error) fields.err = param;
      else if (typeof param === 'string' && level === 'error' && text !== undefined)
        fields.stack = param;
      else if (typeof param === 'string' && text === undefined) text = param;
      else if (typeof param === 'object' && param !== null) Object.assign(fields, param);
    }
    this.pino[level](fields, text);
  }
}
