import { TypeORMError } from 'typeorm';
import { isDatabaseUnavailable } from '../common/exceptions/database-errors.js';

/**
 * The `{"error":…}` line of a failed command. Errors worded for people (API exceptions, refused
 * key changes, bad configuration) are shown as they are. An ORM error is not: its text holds
 * entity dumps, SQL and parameters; the line says what kind of failure it was, with the
 * driver's code when there is one.
 */
export function cliErrorMessage(error: unknown): string {
  const code = driverCode(error);
  const suffix = code ? ` (code ${code})` : '';
  if (error instanceof TypeORMError) {
    return isDatabaseUnavailable(error)
      ? `The database cannot be reached${suffix}.`
      : `A database operation failed${suffix}.`;
  }
  const message = error instanceof Error ? error.message : String(error);
  // One line (some drivers' messages span lines).
  return message.replace(/\s*\n\s*/g, ' ').trim() || 'The command failed.';
}

function driverCode(error: unknown): string | undefined {
  const { code, driverError } = (error ?? {}) as {
    code?: unknown;
    driverError?: { code?: unknown };
  };
  const found = driverError?.code ?? code;
  return typeof found === 'string' && /^[A-Z0-9_]{1,40}$/.test(found) ? found : undefined;
}
