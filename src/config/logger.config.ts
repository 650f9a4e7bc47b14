import { isatty } from 'node:tty';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';
import type { Environment } from './environment.js';

let streamOverride: DestinationStream | undefined;

/** Test hook: send the service's logs to `stream` (apps created afterwards). */
export function useLogStream(stream: DestinationStream | undefined) {
  streamOverride = stream;
}

/**
 * A request as logged (request-log.ts): never its headers or body, and its URL as urlForLog
 * leaves it. Anything else logged as `req` keeps only its id and method.
 */
export class LoggedRequest {
  constructor(
    readonly id: string,
    readonly method?: string,
    readonly url?: string,
    readonly remoteAddress?: string,
  ) {}
}

/** pino's options: JSON lines; no headers, bodies or secret fields, whoever logs them. */
export function loggerOptions(env: Pick<Environment, 'LOG_LEVEL'>): LoggerOptions {
  return {
    level: env.LOG_LEVEL,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["proxy-authorization"]',
        // A secret field at the top of a line, or one level down (`{ body: { password } }`).
        'password',
        'client_secret',
        'access_token',
        'token',
        '*.password',
        '*.client_secret',
        '*.access_token',
        '*.token',
      ],
      censor: '[redacted]',
    },
    serializers: {
      req: (req: { id?: unknown; method?: unknown }) =>
        req instanceof LoggedRequest ? { ...req } : { id: req.id, method: req.method },
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      err: errorForLog,
    },
  };
}

/**
 * What a database error carries of the values it was given: a statement's `parameters` (TypeORM's
 * QueryFailedError) and PostgreSQL's `detail` (`Key (…)=(…) already exists`). They come from
 * request bodies, which are never logged; the statement's text and the error's code and message stay.
 */
const VALUE_FIELDS = ['parameters', 'detail'];

/** An error as pino logs it, without VALUE_FIELDS on it or on its `driverError`. */
function errorForLog(error: unknown): unknown {
  const logged = pino.stdSerializers.err(error as Error) as unknown;
  if (logged === error || typeof logged !== 'object' || logged === null) return logged;
  const fields = logged as Record<string, unknown>;
  for (const name of VALUE_FIELDS) delete fields[name];
  const driver = fields.driverError;
  if (typeof driver === 'object' && driver !== null) {
    // A copy: a driver error that is not an Error is the thrown error's own object here.
    const copy: Record<string, unknown> = { ...(driver as Record<string, unknown>) };
    for (const name of VALUE_FIELDS) delete copy[name];
    fields.driverError = copy;
  }
  return logged;
}

/**
 * The service's one root logger: stdout (or stderr with LOG_DESTINATION=stderr), asynchronous.
 * JSON lines for machines; on a terminal, the same lines made readable (pino-pretty), since a
 * person is reading them.
 */
export function createRootLogger(env: Pick<Environment, 'LOG_LEVEL'>): Logger {
  const fd = process.env.LOG_DESTINATION === 'stderr' ? 2 : 1;
  const destination =
    streamOverride ??
    (isatty(fd)
      ? pretty({ destination: fd, colorize: true, ignore: 'pid,hostname', sync: true })
      : pino.destination({ dest: fd, sync: false }));
  return pino(loggerOptions(env), destination);
}
