import { hash } from 'node:crypto';

export type Row = Record<string, unknown>;

export interface Statement {
  sql: string;
  params: unknown[];
  /** A name for a text that repeats: PostgreSQL then parses and plans it once per connection. */
  prepared?: string;
}

export interface StatementResult {
  rows: Row[];
  /** Rows inserted, updated or deleted (or returned, for a statement with RETURNING). */
  affected: number;
}

/**
 * A unit of work written once for both databases: it yields each statement and receives its
 * result, so the same steps can run synchronously on SQLite and asynchronously on PostgreSQL.
 */
export type Work<T> = Generator<Statement, T, StatementResult>;

/** The name under which PostgreSQL keeps `text` prepared: one per text, the same on every connection. */
export function preparedName(text: string): string {
  return `s_${hash('sha1', text, 'base64url')}`;
}
