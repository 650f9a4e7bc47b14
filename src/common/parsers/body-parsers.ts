export const MAX_JSON_DEPTH = 32;

export class BodyParseError extends Error {
  readonly statusCode = 400;
}

/**
 * JSON.parse with the limits a public endpoint needs: nesting bounded (deep structures would
 * exhaust the stack of every recursive consumer after the parser), `__proto__` and
 * `constructor.prototype` keys refused (prototype poisoning).
 */
export function parseJson(text: string): unknown {
  if (text.length === 0) throw new BodyParseError('The request body is empty.');
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
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BodyParseError('The request body is malformed: it is not valid JSON.');
  }
  if (/"(?:__proto__|constructor)"\s*:/.test(text)) rejectPoisoned(value);
  return value;
}

function rejectPoisoned(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  if (Object.prototype.hasOwnProperty.call(value, '__proto__')) {
    throw new BodyParseError('The request body contains a forbidden "__proto__" key.');
  }
  const ctor = (value as Record<string, unknown>).constructor;
  if (
    Object.prototype.hasOwnProperty.call(value, 'constructor') &&
    typeof ctor === 'object' &&
    ctor !== null &&
    Object.prototype.hasOwnProperty.call(ctor, 'prototype')
  ) {
    throw new BodyParseError('The request body contains a forbidden "constructor.prototype" key.');
  }
  for (const child of Object.values(value)) rejectPoisoned(child);
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
