import { isatty } from 'node:tty';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';
import type { Environment } from './environment.js';

let streamOverride: DestinationStream | undefined;

/** Test hook: send the service's logs to `stream` (apps created afterwards). */
export function useLogStream(stream: DestinationStream | undefined) {
  streamOverride = stream;
}

/** Query parameters whose value is never logged, whatever else their name holds (`a[token]`). */
const SECRET_PARAMETERS = new Set([
  'access_token',
  'refresh_token',
  'id_token',
  'token',
  'client_secret',
  'password',
  'code',
  'client_assertion',
]);

/**
 * Percent-decoding until stable (`%255F` is `%5F` is `_`), byte by byte so that it never throws:
 * enough to compare with the ASCII names above.
 */
function decoded(text: string): string {
  let current = text.replace(/\+/g, ' ');
  for (let round = 0; round < 3 && current.includes('%'); round++) {
    current = current.replace(/%([0-9a-f]{2})/gi, (_, hex: string) =>
      String.fromCharCode(parseInt(hex, 16)),
    );
  }
  return current;
}

function isSecretParameter(rawName: string): boolean {
  // `access_token`, `access%5Ftoken`, `access_token[]`, `x[access_token]`, `ACCESS_TOKEN`…
  return decoded(rawName)
    .toLowerCase()
    .split(/[[\]]+/)
    .some((part) => SECRET_PARAMETERS.has(part.trim()));
}

/**
 * The URL with the value of every secret query parameter replaced, the name matched after
 * decoding it (a token sent where it does not belong must not reach the logs in any encoding).
 */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start === -1) return url;
  const query = url
    .slice(start + 1)
    .split('&')
    .map((parameter) => {
      const equals = parameter.indexOf('=');
      const name = equals === -1 ? parameter : parameter.slice(0, equals);
      return isSecretParameter(name) ? `${name}=[redacted]` : parameter;
    });
  return `${url.slice(0, start)}?${query.join('&')}`;
}

/** A request as logged: never its headers or body, and its URL without secret parameters. */
export interface LoggedRequest {
  id: string;
  method: string;
  url: string;
  ip?: string;
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
      req: (req: LoggedRequest) => ({
        id: req.id,
        method: req.method,
        url: redactUrl(String(req.url)),
        remoteAddress: req.ip,
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      err: pino.stdSerializers.err,
    },
  };
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
