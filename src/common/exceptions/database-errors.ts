const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'SQLITE_BUSY',
  'SQLITE_BUSY_SNAPSHOT',
  'SQLITE_BUSY_TIMEOUT',
  'SQLITE_LOCKED',
  '57014', // query_canceled (statement_timeout)
  '57P01', // admin_shutdown
  '57P02',
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  // Refused at connection start: the database dropped or renamed, the login no longer valid.
  '3D000', // invalid_catalog_name
  '28000', // invalid_authorization_specification
  '28P01', // invalid_password
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

// "is not currently accepting connections": ALLOW_CONNECTIONS false (code 55000, which other
// refusals share, so matched by its words).
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connection error|Connection is closed|not connected|database is locked|not currently accepting connections/i;

/** `error` and the errors behind it (TypeORM's driverError, a cause), at most four deep. */
function* errorChain(error: unknown): Generator<any> {
  for (let e = error as any, depth = 0; e && depth < 4; e = e.driverError ?? e.cause, depth++) {
    yield e;
  }
}

/** True when an error means "the database cannot be reached right now" (answered as 503). */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (const e of errorChain(error)) {
    if (typeof e.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
    if (typeof e.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message)) return true;
    if (Array.isArray(e.errors) && e.errors.some(isDatabaseUnavailable)) return true;
  }
  return false;
}

/**
 * True when a PostgreSQL statement ran out of time (statement_timeout, or the client's
 * query_timeout): a smaller piece of the same work may fit. Not SQLite's busy timeout: another
 * process then holds the whole file, whatever the size of the statement.
 */
export function isStatementTimeout(error: unknown): boolean {
  for (const e of errorChain(error)) {
    if (e.code === '57014') return true;
    if (typeof e.message === 'string' && /Query read timeout/i.test(e.message)) return true;
  }
  return false;
}
