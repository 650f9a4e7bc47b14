import { isUtf8 } from 'node:buffer';
import secureJson from 'secure-json-parse';

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
 * Bodies are read as UTF-8 (RFC 8259 §8.1); a declared charset other than UTF-8 is refused (415),
 * never decoded wrongly (é in ISO-8859-1 would become U+FFFD).
 */
export function assertUtf8(contentType: string | undefined): void {
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(contentType ?? '')?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw new BodyParseError('The request body must be UTF-8 (charset=utf-8).', 415);
  }
}

/**
 * The body as text: bytes that are not UTF-8 are refused (415), never replaced by U+FFFD and
 * stored changed.
 */
export function utf8Text(body: Buffer): string {
  if (!isUtf8(body)) throw new BodyParseError('The request body must be UTF-8 text.', 415);
  return body.toString('utf8');
}

/**
 * JSON parsing for a public endpoint: secure-json-parse (Fastify's own parser) refuses
 * `__proto__` and `constructor.prototype` keys, however they are escaped (prototype poisoning),
 * and nesting is bounded before parsing (a deep structure would exhaust the stack of every
 * recursive consumer after the parser: validation, the error filter, the serializer).
 */
export function parseJson(text: string): unknown {
  if (text.length === 0) throw new BodyParseError('The request body is empty.');
  assertShallow(text);
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    throw new BodyParseError(
      (error as Error).message === POISONED
        ? 'The request body contains a forbidden "__proto__" or "constructor.prototype" key.'
        : 'The request body is malformed: it is not valid JSON.',
    );
  }
}

/** secure-json-parse's message for both of its refusals. */
const POISONED = 'Object contains forbidden prototype property';

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
 */
export function parseForm(body: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const [key, value] of new URLSearchParams(body)) {
    const prev = out[key];
    out[key] = prev === undefined ? value : ([] as string[]).concat(prev, value);
  }
  return { ...out };
}
