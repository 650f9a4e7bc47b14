import pino, { type Logger } from 'pino';
import type { Environment } from '../config/environment.js';
import { type Database, databaseForLog } from '../database/index.js';

/** The address the server listens on, as a URL. */
export function listenAddress({ HOST, PORT }: Pick<Environment, 'HOST' | 'PORT'>): string {
  return `http://${HOST.includes(':') && !HOST.startsWith('[') ? `[${HOST}]` : HOST}:${PORT}`;
}

/** Said on PostgreSQL without REDIS_URL, where several instances do not share their limits. */
export const PER_INSTANCE_LIMITS =
  'throttling limits are counted per instance (REDIS_URL is not set): N instances allow N times each limit';

/**
 * The one start line: where the service listens, on which database, at which schema; on
 * PostgreSQL (where instances share a database) whether throttling limits are shared.
 */
export async function startedLine(
  env: Pick<Environment, 'HOST' | 'PORT' | 'DATABASE_URL' | 'TOKEN_ISSUER' | 'REDIS_URL'>,
  db: Database,
): Promise<{ fields: Record<string, unknown>; message: string }> {
  const table = db.dataSource.options.migrationsTableName ?? 'migrations';
  const rows: { name: string }[] = await db.dataSource.query(
    `SELECT name FROM ${table} ORDER BY id`,
  );
  const address = listenAddress(env);
  const database = databaseForLog(env.DATABASE_URL);
  const latest = rows.at(-1)?.name ?? null;
  const perInstance = db.sharedAcrossMachines && !env.REDIS_URL;
  return {
    fields: {
      address,
      database,
      issuer: env.TOKEN_ISSUER,
      migrations: { applied: rows.length, latest },
      throttling: env.REDIS_URL ? 'shared (Redis)' : 'per instance',
    },
    message:
      `listening on ${address}, database ${database}, ${rows.length} migrations applied (latest ${latest})` +
      (perInstance ? `; ${PER_INSTANCE_LIMITS}` : ''),
  };
}

/** How long the last lines may take to be written before the process exits anyway. */
const LAST_LINES_MS = 5000;

/**
 * Exits with `code` once every line logged so far is written. pino's flush() does not wait for a
 * write in flight (sonic-boom, pino.destination()'s stream, calls back at once when it buffers
 * nothing), so exiting on its callback lost the last line whenever stdout was slow to take it;
 * ending the destination waits for everything (and leaves stdout and stderr open). A reader that
 * never takes the lines does not keep the process: it exits after LAST_LINES_MS.
 */
export function exitOnceLogged(logger: Logger, code: number): void {
  process.exitCode = code;
  setTimeout(() => process.exit(code), LAST_LINES_MS).unref();
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as
    | {
        fd?: unknown;
        destroyed?: boolean;
        write: (line: string) => boolean;
        end?: () => void;
        once?: (event: string, listener: () => void) => void;
      }
    | undefined;
  if (typeof stream?.fd === 'number' && stream.end && stream.once) {
    // A line logged once the destination has closed (a request cut by the stop, finishing its
    // error path) is dropped: sonic-boom would throw, and that uncaught error exited 1.
    const write = stream.write.bind(stream);
    stream.write = (line) => (stream.destroyed ? true : write(line));
    stream.once('close', () => process.exit(code));
    stream.end();
    return;
  }
  // Any other destination (pino-pretty on a terminal, a test's stream) writes synchronously.
  logger.flush(() => process.exit(code));
}
