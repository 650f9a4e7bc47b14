import { hash } from 'node:crypto';
import type { DataSource, ObjectLiteral, SelectQueryBuilder } from 'typeorm';

export type Row = Record<string, unknown>;

export interface Statement {
  sql: string;
  params: unknown[];
  /** Set for texts that repeat (see StatementTemplates): PostgreSQL then parses and plans them once. */
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

/** The statement a query builder would run. */
export function statementOf(qb: SelectQueryBuilder<ObjectLiteral>): Statement {
  const [query, params] = qb.getQueryAndParameters();
  return { sql: query, params };
}

/** Stands for a named parameter while a statement's text is translated once. */
class Placeholder {
  constructor(readonly name: string) {}
}

interface Template {
  sql: string;
  names: string[];
  /** Name under which PostgreSQL keeps the statement prepared on each pooled connection. */
  prepared: string;
}

/**
 * Turns `:name` / `:...list` texts into the driver's placeholder style, once per text.
 *
 * TypeORM's escapeQueryWithParameters runs regular expressions on every call, and on SQLite
 * writes numbers into the text, so that each id made a new statement to prepare. Texts with list
 * parameters are translated on every call.
 */
export class StatementTemplates {
  private readonly cache = new Map<string, Template | null>();

  constructor(private readonly dataSource: DataSource) {}

  build(text: string, parameters: ObjectLiteral = {}): Statement {
    const names = Object.keys(parameters);
    const key = `${names.join(',')}\0${text}`;
    let template = this.cache.get(key);
    if (template === undefined) {
      template = this.translate(text, names);
      this.cache.set(key, template);
    }
    if (template === null || names.some((name) => typeof parameters[name] === 'function')) {
      const [query, params] = this.dataSource.driver.escapeQueryWithParameters(text, parameters);
      return { sql: query, params };
    }
    return {
      sql: template.sql,
      params: template.names.map((name) => parameters[name]),
      prepared: template.prepared,
    };
  }

  private translate(text: string, names: string[]): Template | null {
    if (/:\.\.\./.test(text)) return null;
    const marks = Object.fromEntries(names.map((name) => [name, new Placeholder(name)]));
    const [query, params] = this.dataSource.driver.escapeQueryWithParameters(text, marks);
    if (!params.every((p) => p instanceof Placeholder)) return null;
    return {
      sql: query,
      names: params.map((p: Placeholder) => p.name),
      prepared: preparedName(query),
    };
  }
}

/** The name under which PostgreSQL keeps `text` prepared: one per text, the same on every connection. */
export function preparedName(text: string): string {
  return `s_${hash('sha1', text, 'base64url')}`;
}
