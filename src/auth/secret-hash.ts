import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const SCHEME = 'hmac-sha256';

/** 256 random bits: too much entropy to guess, so a fast hash is enough to store it. */
export function generateClientSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** `hmac-sha256$<salt>$<digest>`: the salt keys the HMAC, so equal secrets never share a hash. */
export function hashClientSecret(secret: string): string {
  const salt = randomBytes(16);
  return [SCHEME, salt.toString('base64url'), digest(salt, secret).toString('base64url')].join('$');
}

// Checked against when the client is unknown, so that refusing an unknown client costs the same
// work as refusing a wrong secret and the answer time does not tell which client ids exist.
const UNKNOWN_CLIENT_HASH = hashClientSecret(generateClientSecret());

/** Constant-time check of `secret` against a stored hash; `undefined` stands for "no such client". */
export function verifyClientSecret(secret: string, stored: string | undefined): boolean {
  const [scheme, salt, expected] = (stored ?? UNKNOWN_CLIENT_HASH).split('$');
  const actual = digest(Buffer.from(salt ?? '', 'base64url'), secret);
  const wanted = Buffer.from(expected ?? '', 'base64url');
  const equal = actual.length === wanted.length && timingSafeEqual(actual, wanted);
  return equal && stored !== undefined && scheme === SCHEME;
}

function digest(salt: Buffer, secret: string): Buffer {
  return createHmac('sha256', salt).update(secret, 'utf8').digest();
}
