import type { FastifyInstance } from 'fastify';
import qs from 'qs';
import { RefusedInputException } from '../exceptions/api.exception.js';

/** Set on a parsed query whose keys tried to reach a prototype (qs drops such keys silently). */
const POISONED = Symbol('poisoned-query');

export class PoisonedQueryException extends RefusedInputException {
  readonly status = 400;
  constructor() {
    super('The query string contains a forbidden "__proto__" or "constructor.prototype" key.');
  }
}

/**
 * Every route refuses a marked query (400, CONTRACT §2; `invalid_request` at /oauth/*), whether
 * or not it reads its query: a route without query parameters would otherwise answer as if
 * nothing had been sent. The exception filter answers it after the route's token, scope and
 * resource checks, like a refused body.
 */
export function refusePoisonedQueries(fastify: FastifyInstance): void {
  fastify.addHook('preValidation', (request, _reply, done) => {
    if (isPoisonedQuery(request.query)) {
      return done(new PoisonedQueryException());
    }
    done();
  });
}

/**
 * Bracketed query strings (`result_mode[attributes][page]=2`) into null-prototype objects, so
 * that a key named like an Object.prototype member (`toString`, `hasOwnProperty`…) is kept as an
 * ordinary key and refused by validation as unknown. `__proto__` and `constructor[prototype]`
 * are marked, and refused with 400 by refusePoisonedQueries() (as in JSON bodies).
 */
export function parseQuery(query: string): Record<string, unknown> {
  const parsed = qs.parse(query, {
    depth: 4,
    parameterLimit: 100,
    arrayLimit: 20,
    plainObjects: true,
    allowPrototypes: true,
  }) as Record<string, unknown>;
  // Only a query that could spell it (percent-encoded letters too) is read a second time.
  if ((query.includes('proto') || query.includes('%')) && hasPoisonedKey(query)) {
    Object.defineProperty(parsed, POISONED, { value: true });
  }
  return parsed;
}

export function isPoisonedQuery(query: unknown): boolean {
  return typeof query === 'object' && query !== null && POISONED in query;
}

function hasPoisonedKey(query: string): boolean {
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(query);
  } catch {
    return false;
  }
  for (const key of params.keys()) {
    if (reachesPrototype(key)) return true;
  }
  return false;
}

/**
 * Whether a (decoded) parameter name, read with brackets as qs reads it, names `__proto__` or
 * `constructor[prototype]`.
 */
export function reachesPrototype(key: string): boolean {
  const segments = key.split(/[[\]]+/).filter(Boolean);
  return (
    segments.includes('__proto__') ||
    segments.some((s, i) => s === 'constructor' && segments[i + 1] === 'prototype')
  );
}
