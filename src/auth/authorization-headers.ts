import type { IncomingMessage } from 'node:http';

/**
 * Every Authorization header of the request, in the order sent. Node keeps only the first in
 * `headers.authorization`; the raw list shows them all, so that two can be refused (as
 * ambiguous: neither is believed, docs/contract.md §3 and §4).
 */
export function authorizationHeaders(raw: IncomingMessage): string[] {
  const values: string[] = [];
  const { rawHeaders } = raw;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    // The length first: most names are not 13 characters long, and lower-casing costs.
    if (rawHeaders[i].length === 13 && rawHeaders[i].toLowerCase() === 'authorization') {
      values.push(rawHeaders[i + 1]);
    }
  }
  return values;
}
