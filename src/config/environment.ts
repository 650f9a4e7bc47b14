import { plainToInstance, Transform } from 'class-transformer';
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  ValidateBy,
  ValidationError,
  validateSync,
} from 'class-validator';
import { isTrustProxy, toTrustProxy, trustProxyProblem, type TrustProxy } from './trust-proxy.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const DEFAULT_DATABASE_URL = 'sqlite:./data/app.sqlite';

const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value;

/**
 * Every environment variable the service reads. Validated once at boot; a bad value stops the
 * process with one line naming the variable and what it accepts.
 */
export class Environment {
  @Transform(toInt)
  @IsInt({ message: 'PORT must be an integer from 1 to 65535' })
  @Min(1, { message: 'PORT must be an integer from 1 to 65535' })
  @Max(65535, { message: 'PORT must be an integer from 1 to 65535' })
  PORT = 3000;

  @IsString({ message: 'HOST must be a host name or IP address' })
  @Matches(/^[A-Za-z0-9.:[\]-]+$/, { message: 'HOST must be a host name or IP address' })
  HOST = '0.0.0.0';

  @Matches(/^(sqlite:.+|postgres(ql)?:\/\/.+)$/, {
    message: 'DATABASE_URL must be sqlite:<path>, sqlite::memory: or postgres://…',
  })
  DATABASE_URL = DEFAULT_DATABASE_URL;

  /** Serves GET /metrics (Prometheus) on this port only; no metrics when unset. */
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'METRICS_PORT must be an integer from 1 to 65535' })
  @Min(1, { message: 'METRICS_PORT must be an integer from 1 to 65535' })
  @Max(65535, { message: 'METRICS_PORT must be an integer from 1 to 65535' })
  METRICS_PORT?: number;

  @Transform(toInt)
  @IsInt({ message: 'DATABASE_POOL_SIZE must be an integer from 1 to 100' })
  @Min(1, { message: 'DATABASE_POOL_SIZE must be an integer from 1 to 100' })
  @Max(100, { message: 'DATABASE_POOL_SIZE must be an integer from 1 to 100' })
  DATABASE_POOL_SIZE = 10;

  @Transform(toInt)
  @IsInt({ message: 'SQLITE_LOCK_TIMEOUT_MS must be an integer from 100 to 60000' })
  @Min(100, { message: 'SQLITE_LOCK_TIMEOUT_MS must be an integer from 100 to 60000' })
  @Max(60000, { message: 'SQLITE_LOCK_TIMEOUT_MS must be an integer from 100 to 60000' })
  SQLITE_LOCK_TIMEOUT_MS = 5000;

  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: (typeof LOG_LEVELS)[number] = 'info';

  @Transform(toInt)
  @IsInt({ message: 'TOKEN_TTL_SECONDS must be an integer from 60 to 31536000' })
  @Min(60, { message: 'TOKEN_TTL_SECONDS must be an integer from 60 to 31536000' })
  @Max(31536000, { message: 'TOKEN_TTL_SECONDS must be an integer from 60 to 31536000' })
  TOKEN_TTL_SECONDS = 31536000;

  /** Default: the address the server listens on (see `defaultIssuer`). */
  @Matches(/^https?:\/\/\S+$/, { message: 'TOKEN_ISSUER must be an http(s) URL' })
  TOKEN_ISSUER!: string;

  @Matches(/^\S{1,200}$/, { message: 'TOKEN_AUDIENCE must be a non-empty string without spaces' })
  TOKEN_AUDIENCE = 'api';

  @IsOptional()
  @Matches(/-----BEGIN [A-Z ]*PRIVATE KEY-----/, {
    message: 'TOKEN_SIGNING_KEY must be a PEM private key (Ed25519 or P-256)',
  })
  TOKEN_SIGNING_KEY?: string;

  @Transform(toInt)
  @IsInt({ message: 'THROTTLE_TOKEN_PER_IP must be a positive integer (requests a minute)' })
  @Min(1, { message: 'THROTTLE_TOKEN_PER_IP must be a positive integer (requests a minute)' })
  THROTTLE_TOKEN_PER_IP = 300;

  @Transform(toInt)
  @IsInt({ message: 'THROTTLE_TOKEN_FAILURES_PER_CLIENT must be a positive integer (a minute)' })
  @Min(1, { message: 'THROTTLE_TOKEN_FAILURES_PER_CLIENT must be a positive integer (a minute)' })
  THROTTLE_TOKEN_FAILURES_PER_CLIENT = 10;

  @Transform(toInt)
  @IsInt({ message: 'THROTTLE_TOKEN_FAILURES_PER_USER must be a positive integer (a minute)' })
  @Min(1, { message: 'THROTTLE_TOKEN_FAILURES_PER_USER must be a positive integer (a minute)' })
  THROTTLE_TOKEN_FAILURES_PER_USER = 10;

  @Transform(toInt)
  @IsInt({
    message: 'THROTTLE_TOKEN_FAILURES_PER_USER_ALL_ADDRESSES must be a positive integer (a minute)',
  })
  @Min(1, {
    message: 'THROTTLE_TOKEN_FAILURES_PER_USER_ALL_ADDRESSES must be a positive integer (a minute)',
  })
  THROTTLE_TOKEN_FAILURES_PER_USER_ALL_ADDRESSES = 100;

  @Transform(toInt)
  @IsInt({ message: 'REVOCATION_REFRESH_MS must be an integer from 100 to 5000' })
  @Min(100, { message: 'REVOCATION_REFRESH_MS must be an integer from 100 to 5000' })
  @Max(5000, { message: 'REVOCATION_REFRESH_MS must be an integer from 100 to 5000' })
  REVOCATION_REFRESH_MS = 2000;

  @Transform(toInt)
  @IsInt({ message: 'WEBHOOK_RETENTION_DAYS must be an integer from 1 to 3650' })
  @Min(1, { message: 'WEBHOOK_RETENTION_DAYS must be an integer from 1 to 3650' })
  @Max(3650, { message: 'WEBHOOK_RETENTION_DAYS must be an integer from 1 to 3650' })
  WEBHOOK_RETENTION_DAYS = 30;

  @IsOptional()
  @Matches(/^(\*|https?:\/\/[^\s,]+(,https?:\/\/[^\s,]+)*)$/, {
    message: 'CORS_ORIGINS must be * or a comma-separated list of http(s) origins',
  })
  CORS_ORIGINS?: string;

  /** Whose X-Forwarded-For is believed (the client address every limit is counted by). */
  @Transform(toTrustProxy)
  @ValidateBy({
    name: 'isTrustProxy',
    validator: { validate: isTrustProxy, defaultMessage: (args) => trustProxyProblem(args?.value) },
  })
  TRUST_PROXY: TrustProxy = false;

  /**
   * redis://[:password@]host:port/db. When set, throttling counters are shared by every instance
   * using it, and token-state changes travel by its pub/sub; unset, each process counts alone.
   */
  @IsOptional()
  @Matches(/^rediss?:\/\/[^\s/?#]+(\/[0-9]*)?(\?\S*)?$/, {
    message: 'REDIS_URL must be redis://host:port[/db] (db a number) or rediss://…',
  })
  REDIS_URL?: string;

  /**
   * Encrypts the webhook signing secrets at rest (AES-256-GCM): 32 random bytes, as 64 hex digits
   * or base64 (`openssl rand -base64 32`). Unset, `clients:webhook-secret` refuses to create a
   * secret, and the server refuses to start while secrets are stored (docs/contract.md §6).
   */
  @IsOptional()
  @Matches(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=?)$/, {
    message:
      'WEBHOOK_SECRET_KEY must be 32 random bytes as 64 hex digits or base64 (openssl rand -base64 32)',
  })
  WEBHOOK_SECRET_KEY?: string;

  @Transform(toInt)
  @IsInt({ message: 'HTTP_HEADERS_TIMEOUT_MS must be an integer from 100 to 120000' })
  @Min(100, { message: 'HTTP_HEADERS_TIMEOUT_MS must be an integer from 100 to 120000' })
  @Max(120000, { message: 'HTTP_HEADERS_TIMEOUT_MS must be an integer from 100 to 120000' })
  HTTP_HEADERS_TIMEOUT_MS = 10000;

  @Transform(toInt)
  @IsInt({ message: 'HTTP_REQUEST_TIMEOUT_MS must be an integer from 100 to 600000' })
  @Min(100, { message: 'HTTP_REQUEST_TIMEOUT_MS must be an integer from 100 to 600000' })
  @Max(600000, { message: 'HTTP_REQUEST_TIMEOUT_MS must be an integer from 100 to 600000' })
  HTTP_REQUEST_TIMEOUT_MS = 30000;

  /**
   * How long an idle keep-alive connection stays open. Above what the clients and proxies in
   * front keep idle connections for (nginx's upstream keepalive_timeout 60 s, cloud load
   * balancers 60 s and more), so that they always close first: a server closing a connection as
   * a proxy reuses it costs that request (a 502 that is not retried). 72 s, Fastify's default.
   */
  @Transform(toInt)
  @IsInt({ message: 'HTTP_KEEP_ALIVE_TIMEOUT_MS must be an integer from 1000 to 600000' })
  @Min(1000, { message: 'HTTP_KEEP_ALIVE_TIMEOUT_MS must be an integer from 1000 to 600000' })
  @Max(600000, { message: 'HTTP_KEEP_ALIVE_TIMEOUT_MS must be an integer from 1000 to 600000' })
  HTTP_KEEP_ALIVE_TIMEOUT_MS = 72000;
}

export class InvalidEnvironmentError extends Error {
  override readonly name = 'InvalidEnvironmentError';
}

/** Variables whose value is a secret: a bad one is named, never echoed (logs keep no secret). */
const SECRET_VARIABLES = new Set(['TOKEN_SIGNING_KEY', 'WEBHOOK_SECRET_KEY']);

function flatten(errors: ValidationError[]): string[] {
  return errors.flatMap((error) => {
    const messages = Object.values(error.constraints ?? {});
    const shown = SECRET_VARIABLES.has(error.property)
      ? 'a value that is not shown'
      : JSON.stringify(withoutPassword(String(error.value)));
    return messages.length ? [`${messages[0]} (got ${shown})`] : flatten(error.children ?? []);
  });
}

/** A URL's password (`scheme://user:password@…`, any scheme) masked: DATABASE_URL, REDIS_URL… */
function withoutPassword(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/]*):[^@/]*@/i, '$1:*****@');
}

/** Hosts that mean "every interface": no client can call them, so the issuer names localhost. */
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]']);

/**
 * The issuer a stock discovery client expects when it is pointed at this server with no other
 * configuration: `http://<HOST>:<PORT>`, `localhost` for a wildcard HOST.
 */
export function defaultIssuer({ HOST, PORT }: Pick<Environment, 'HOST' | 'PORT'>): string {
  const host = WILDCARD_HOSTS.has(HOST)
    ? 'localhost'
    : HOST.includes(':') && !HOST.startsWith('[')
      ? `[${HOST}]`
      : HOST;
  return `http://${host}:${PORT}`;
}

/**
 * Reads `.env` in the working directory into process.env, once, at a process's entry point (the
 * server and the CLI alike). A variable already in the real environment wins over the file. The
 * tests never call it, so a developer's `.env` cannot leak into them.
 */
export function loadEnvFile(path = '.env'): void {
  if (!existsSync(path)) return;
  envFileText(path);
  process.loadEnvFile(path);
}

/**
 * One variable as the server would see it (the real environment's, else `.env`'s in the working
 * directory), without loading the file into process.env: for the TypeORM CLI's data source
 * (ormconfig.ts), which the tests import too, and into which a developer's `.env` must not leak.
 */
export function configuredValue(name: string, path = '.env'): string | undefined {
  if (process.env[name] !== undefined || !existsSync(path)) return process.env[name];
  return parseEnv(envFileText(path))[name];
}

/** A `.env` file's text, refused whole when a line is not NAME=value (firstUnreadableLine()). */
function envFileText(path: string): string {
  const text = readFileSync(path, 'utf8');
  const unreadable = firstUnreadableLine(text);
  if (unreadable !== undefined) {
    throw new InvalidEnvironmentError(
      `${path} line ${unreadable} is not NAME=value (a comment starts with #); nothing was read from ${path}.`,
    );
  }
  return text;
}

/**
 * The number of the first line of a `.env` text that is neither blank, a comment nor
 * `NAME=value` (a quoted value may go on over lines). Node's parser takes such a line as the
 * start of a name that ends at the next `=`, and so drops the setting on the line after it.
 */
function firstUnreadableLine(text: string): number | undefined {
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '' || line.startsWith('#')) continue;
    const assignment = /^(?:export\s+)?[^\s=#]+\s*=\s*(["'`]?)/.exec(line);
    if (!assignment) return i + 1;
    const quote = assignment[1];
    // A quoted value not closed on its line goes on to the line that closes it.
    if (quote && !line.slice(assignment[0].length).includes(quote)) {
      while (i + 1 < lines.length && !lines[i + 1].includes(quote)) i++;
      i++;
    }
  }
  return undefined;
}

/** Validates raw variables (process.env) into a typed Environment, or throws one readable line. */
export function validateEnvironment(raw: Record<string, unknown>): Environment {
  const present = Object.fromEntries(
    Object.entries(raw).filter(([, value]) => value !== undefined && value !== ''),
  );
  const env = plainToInstance(Environment, present, { exposeDefaultValues: true });
  // Derived defaults come after the values they derive from have been coerced.
  if (env.TOKEN_ISSUER === undefined) {
    env.TOKEN_ISSUER = defaultIssuer(env);
  }
  const errors = validateSync(env, { skipMissingProperties: false, whitelist: false });
  if (errors.length > 0) {
    throw new InvalidEnvironmentError(`Invalid configuration: ${flatten(errors).join('; ')}`);
  }
  return env;
}
