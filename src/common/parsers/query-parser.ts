import type { FastifyInstance } from 'fastify';
import qs from 'qs';
import { RefusedInputException } from '../exceptions/api.exception.js';

/** The most parameters a query string may hold (empty pieces between `&`s are none). */
export const QUERY_PARAMETER_LIMIT = 100;

/** Thrown by decode() out of qs.parse(): the query string is refused (parseQuery()). */
class MalformedEncoding extends Error {}

/**
 * A key or value as qs's own decoder reads it (`+` is a space, then percent-decoding as UTF-8),
 * except that a `%` not followed by two hex digits, or bytes that are not UTF-8 (`%ED%A0%80`, a
 * surrogate), refuse the query: qs kept such text as it was, and a filter then looked for the
 * literal `%ED%A0%80`.
 */
function decode(text: string): string {
  const spaced = text.includes('+') ? text.replace(/\+/g, ' ') : text;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    throw new MalformedEncoding();
  }
}

/** qs's options for every query string, built once. */
const QS_OPTIONS = {
  depth: 4,
  parameterLimit: QUERY_PARAMETER_LIMIT,
  arrayLimit: 20,
  plainObjects: true,
  allowPrototypes: true,
  decoder: decode,
} as const;

/** Set on a parsed query that is refused whatever the route: the refusal's message. */
const REFUSED = Symbol('refused-query');

const POISONED =
  'The query string contains a forbidden "__proto__" or "constructor.prototype" key.';
const TOO_MANY = `The query string must not hold more than ${QUERY_PARAMETER_LIMIT} parameters.`;
const MALFORMED =
  'The query string is malformed: a % must start a percent-encoded UTF-8 character (%XX).';

export class RefusedQueryException extends RefusedInputException {
  readonly status = 400;
}

/**
 * Every route refuses a marked query (400, CONTRACT §2; `invalid_request` at /oauth/*), whether
 * or not it reads its query: a route without query parameters would otherwise answer as if
 * nothing had been sent. The exception filter answers it after the route's token, scope and
 * resource checks, like a refused body.
 */
export function refuseMarkedQueries(fastify: FastifyInstance): void {
  fastify.addHook('preValidation', (request, _reply, done) => {
    const refusal = refusalOf(request.query);
    if (refusal !== undefined) return done(new RefusedQueryException(refusal));
    done();
  });
}

/**
 * Bracketed query strings (`result_mode[attributes][page]=2`) into null-prototype objects, so
 * that a key named like an Object.prototype member (`toString`, `hasOwnProperty`…) is kept as an
 * ordinary key and refused by validation as unknown. `__proto__` and `constructor[prototype]`
 * are marked, and refused with 400 by refuseMarkedQueries() (as in JSON bodies); so is a query
 * of more than QUERY_PARAMETER_LIMIT parameters, which qs would cut short silently (a filter or a
 * limit sent after them ignored), and one whose percent-encoding is malformed (decode()). Empty
 * pieces (`a=1&&b=2`) are left out before qs counts.
 */
export function parseQuery(query: string): Record<string, unknown> {
  // qs counts empty pieces too: only a query of more pieces than the limit is split here first.
  if (morePiecesThan(query, QUERY_PARAMETER_LIMIT)) {
    const pieces = query.split('&').filter((piece) => piece !== '');
    if (pieces.length > QUERY_PARAMETER_LIMIT) return refused(TOO_MANY);
    query = pieces.join('&');
  }
  let parsed: Record<string, unknown>;
  try {
    parsed = qs.parse(query, QS_OPTIONS) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof MalformedEncoding) return refused(MALFORMED);
    throw error;
  }
  // Only a query that could spell it (percent-encoded letters too) is read a second time.
  if ((query.includes('proto') || query.includes('%')) && hasPoisonedKey(query)) {
    Object.defineProperty(parsed, REFUSED, { value: POISONED });
  }
  return parsed;
}

/** Whether `query` has more than `limit` `&`-separated pieces, without splitting it. */
function morePiecesThan(query: string, limit: number): boolean {
  let at = -1;
  for (let n = 0; n < limit; n++) {
    at = query.indexOf('&', at + 1);
    if (at === -1) return false;
  }
  return true;
}

function refused(message: string): Record<string, unknown> {
  return Object.defineProperty({}, REFUSED, { value: message });
}

/** Why a parsed query is refused (parseQuery()), if it is. */
export function refusalOf(query: unknown): string | undefined {
  return typeof query === 'object' && query !== null
    ? (query as { [REFUSED]?: string })[REFUSED]
    : undefined;
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
