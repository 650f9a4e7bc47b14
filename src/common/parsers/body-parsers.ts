import { isUtf8 } from 'node:buffer';
import type { IncomingHttpHeaders } from 'node:http';
import secureJson from 'secure-json-parse';
import { reachesPrototype } from './query-parser.js';

export const MAX_JSON_DEPTH = 32;

/** A body refused by its parser: 400 (malformed) or 415 (an encoding we do not read). */
export class BodyParseError extends Error {
  constructor(
    message: string,
    readonly statusCode: 400 | 415 = 400,
  ) {
    super(message);
  }
}

/**
 * Bodies are read as UTF-8 (RFC 8259 §8.1) and as sent: a declared charset other than UTF-8 (any
 * of them, when the parameter is repeated) is refused (415), never decoded wrongly (é in
 * ISO-8859-1 would become U+FFFD), and so is a compressed body (`Content-Encoding`, or a
 * `Transfer-Encoding` other than chunked), which would otherwise be parsed as if it were text.
 */
export function assertReadable(headers: IncomingHttpHeaders): void {
  const type = headers['content-type'] ?? '';
  for (const [, charset] of type.includes('=') ? type.matchAll(CHARSET) : []) {
    if (!/^utf-?8$/i.test(charset)) {
      throw new BodyParseError('The request body must be UTF-8 (charset=utf-8).', 415);
    }
  }
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && !/^\s*(identity)?\s*$/i.test(encoding)) {
    throw new BodyParseError('The request body must not be compressed (no Content-Encoding).', 415);
  }
  // Node undoes only `chunked`: `gzip, chunked` would hand over the compressed bytes as text.
  const transfer = headers['transfer-encoding'];
  if (transfer !== undefined && !/^\s*chunked\s*$/i.test(transfer)) {
    throw new BodyParseError(
      'The request body must not be compressed (no Transfer-Encoding but chunked).',
      415,
    );
  }
}

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)"?/gi;

export interface JsonOptions {
  /**
   * Note the keys that the top-level object holds more than once, for repeatedKeys() (JSON.parse
   * keeps only the last, silently). Costs a second pass over the text: only where a repeated
   * key must be refused (the OAuth endpoints, RFC 6749 §3.1).
   */
  findRepeatedKeys?: boolean;
}

/** Bytes that are not UTF-8 are refused (415), never replaced by U+FFFD and stored changed. */
export function assertUtf8(body: Buffer): void {
  if (!isUtf8(body)) throw new BodyParseError('The request body must be UTF-8 text.', 415);
}

/** The body as text (assertUtf8()). */
function utf8Text(body: Buffer): string {
  assertUtf8(body);
  return body.toString('utf8');
}

/**
 * A JSON body's bytes as a value. No bytes is no body (undefined), as without a Content-Type:
 * the routes decide what that means.
 */
export function jsonBody(bytes: Buffer, options?: JsonOptions): unknown {
  return bytes.length === 0 ? undefined : parseJson(utf8Text(bytes), options);
}

/** A form body's bytes as parameters (parseForm()). */
export function formBody(bytes: Buffer): Record<string, string | string[]> {
  return parseForm(utf8Text(bytes));
}

/**
 * JSON parsing for a public endpoint: secure-json-parse (Fastify's own parser) refuses
 * `__proto__` and `constructor.prototype` keys, however they are escaped (prototype poisoning),
 * and nesting is bounded before parsing (a deep structure would exhaust the stack of every
 * recursive consumer after the parser: validation, the error filter, the serializer).
 */
export function parseJson(text: string, { findRepeatedKeys = false }: JsonOptions = {}): unknown {
  assertShallow(text);
  let parsed: unknown;
  try {
    parsed = secureJson.parse(text, undefined, {
      protoAction: 'error',
      constructorAction: 'error',
    });
  } catch (error) {
    throw new BodyParseError(
      (error as Error).message === POISONED
        ? POISONED_BODY
        : 'The request body is malformed: it is not valid JSON.',
    );
  }
  // A number beyond a double's range (1e400; 309 digits) parses as Infinity, which JSON cannot
  // hold: stored, it would read back as null. Looked for only when the text may hold one.
  if (MAYBE_OUT_OF_RANGE.test(text) && holdsInfinity(parsed)) {
    throw new BodyParseError(
      'The request body is malformed: it holds a number too large for a double (over 1.8e308).',
    );
  }
  if (findRepeatedKeys && typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
    const repeated = topLevelRepeats(text);
    if (repeated.size > 0) Object.defineProperty(parsed, REPEATED_KEYS, { value: repeated });
  }
  return parsed;
}

/**
 * Text that may parse as Infinity: a number of k integer digits and exponent e is below 10^(k+e),
 * so it can reach 1.8e308 only when k + e ≥ 309: with an exponent of two digits or more, or with
 * a run of 210 digits (e ≤ 9 needs k ≥ 300; no exponent, k ≥ 309). Either makes holdsInfinity()
 * look. A run of digits is tried only from its first digit (the lookbehind), so that a body of
 * long runs costs one pass, not one pass per digit (1 MiB of them took 1.2 s).
 */
const MAYBE_OUT_OF_RANGE = /[eE]\+?\d{2}|(?<!\d)\d{210}/;

/** Whether `value` holds ±Infinity anywhere (its nesting is bounded: assertShallow()). */
function holdsInfinity(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (typeof value !== 'object' || value === null) return false;
  return Object.values(value).some(holdsInfinity);
}

/** secure-json-parse's message for both of its refusals. */
const POISONED = 'Object contains forbidden prototype property';
const POISONED_BODY =
  'The request body contains a forbidden "__proto__" or "constructor.prototype" key.';

/** Set on a parsed object by parseJson({ findRepeatedKeys: true }) when its text repeats keys. */
const REPEATED_KEYS = Symbol('repeated-keys');
const NONE: ReadonlySet<string> = new Set();

/**
 * The top-level keys that a body held more than once: a form's, or a JSON body's parsed with
 * `findRepeatedKeys`.
 */
export function repeatedKeys(body: unknown): ReadonlySet<string> {
  if (typeof body !== 'object' || body === null) return NONE;
  return (body as { [REPEATED_KEYS]?: ReadonlySet<string> })[REPEATED_KEYS] ?? NONE;
}

/**
 * The keys, decoded (`"\u0073cope"` is `scope`), that the top-level object of `text` holds more
 * than once. `text` is valid JSON whose top-level value is an object: after its `{` or a comma at
 * depth 1, the next string is a key.
 */
function topLevelRepeats(text: string): Set<string> {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  let depth = 0;
  let keyNext = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      const start = i;
      let escaped = false;
      for (i++; text.charCodeAt(i) !== 34; i++) {
        if (text.charCodeAt(i) === 92) {
          escaped = true;
          i++; // skip the escaped character
        }
      }
      if (!keyNext) continue;
      keyNext = false;
      const key = escaped
        ? (JSON.parse(text.slice(start, i + 1)) as string)
        : text.slice(start + 1, i);
      (seen.has(key) ? repeated : seen).add(key);
    } else if (c === 123 || c === 91) keyNext = ++depth === 1;
    else if (c === 125 || c === 93) depth--;
    else if (c === 44) keyNext = depth === 1;
  }
  return repeated;
}

function assertShallow(text: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > MAX_JSON_DEPTH) {
        throw new BodyParseError(
          `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`,
        );
      }
    } else if (c === 125 || c === 93) depth--;
  }
}

/**
 * application/x-www-form-urlencoded → flat object. A repeated parameter becomes an array so that
 * the OAuth endpoints can refuse it (RFC 6749 §3.2: parameters MUST NOT be included more than once).
 * A `__proto__` or `constructor[prototype]` name (once decoded) is refused as in JSON bodies and
 * query strings (docs/contract.md §2), although the flat object holds it harmlessly.
 */
export function parseForm(body: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const [key, value] of new URLSearchParams(body)) {
    if (reachesPrototype(key)) throw new BodyParseError(POISONED_BODY);
    const prev = out[key];
    // Appended in place: copying the array on every repeat made a 1 MiB body of one repeated
    // key cost minutes of CPU (quadratic), before any credential was checked.
    if (prev === undefined) out[key] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else out[key] = [prev, value];
  }
  const form = { ...out };
  // A key given more than once (its values gathered in an array) is noted for repeatedKeys(), as
  // the JSON parser notes its own.
  const repeated = new Set(Object.keys(form).filter((key) => Array.isArray(form[key])));
  if (repeated.size > 0) Object.defineProperty(form, REPEATED_KEYS, { value: repeated });
  return form;
}
