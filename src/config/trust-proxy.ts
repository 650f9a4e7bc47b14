import { isIP } from 'node:net';

/** Fastify's `trustProxy`: believe no one, the last N hops, or these proxies' addresses. */
export type TrustProxy = false | number | string[];

// proxy-addr's names for common ranges (Fastify resolves them).
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

const WHAT_TO_WRITE =
  'write false, the number of proxies in front of the service (e.g. 1), ' +
  'or their addresses or CIDR ranges (e.g. 10.0.0.0/8,127.0.0.1)';

/** Why `raw` is not a TRUST_PROXY setting, or null when it is one. */
function problem(raw: string): string | null {
  const value = raw.trim();
  if (value === 'true') {
    return `TRUST_PROXY=true would believe any X-Forwarded-For (anyone could pick their address); ${WHAT_TO_WRITE}`;
  }
  if (value === 'false' || /^\d{1,2}$/.test(value)) return null;
  const bad = value.split(',').find((entry) => !isProxyAddress(entry.trim()));
  return bad === undefined
    ? null
    : `TRUST_PROXY: ${JSON.stringify(bad.trim())} is not an address or CIDR range; ${WHAT_TO_WRITE}`;
}

function isProxyAddress(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address, prefix, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** The setting `raw` names; throws with the variable's message when it names none. */
export function parseTrustProxy(raw: string): TrustProxy {
  const refused = problem(raw);
  if (refused) throw new Error(refused);
  const value = raw.trim();
  if (value === 'false') return false;
  if (/^\d+$/.test(value)) return Number(value) === 0 ? false : Number(value);
  return value.split(',').map((entry) => entry.trim());
}

/** For the environment's validator: the parsed setting, or the raw text when it is not one. */
export function toTrustProxy({ value }: { value: unknown }): unknown {
  if (typeof value === 'boolean' && value === false) return false;
  if (typeof value !== 'string') return value;
  try {
    return parseTrustProxy(value);
  } catch {
    return value;
  }
}

export function isTrustProxy(value: unknown): value is TrustProxy {
  return (
    value === false ||
    (typeof value === 'number' && Number.isInteger(value) && value > 0) ||
    (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string'))
  );
}

export function trustProxyProblem(value: unknown): string {
  return (typeof value === 'string' && problem(value)) || `TRUST_PROXY: ${WHAT_TO_WRITE}`;
}

/**
 * The setting as Fastify's `trustProxy` option. A hop count becomes a function: this Fastify
 * refuses numbers (it believes no one for them), while a count is what a deployment behind a
 * fixed chain of N proxies, none of which can be bypassed, wants: the N nearest hops are
 * believed, so the address is the one the farthest of them saw.
 */
export function fastifyTrustProxy(
  setting: TrustProxy,
): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting !== 'number') return setting;
  return (_address, hop) => hop < setting;
}
