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
