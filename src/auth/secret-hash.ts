import { Injectable } from '@nestjs/common';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const SCHEME = 'hmac-sha256';
const SALT_BYTES = 16;

/** 256 random bits: too much entropy to guess, so a fast hash is enough to store it. */
export function generateClientSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Client secrets as stored: `hmac-sha256$<salt>$<digest>`, the salt keying the HMAC so that
 * equal secrets never share a hash. A provider (not bare functions) so that a test can watch
 * the hashing work each path does.
 */
@Injectable()
export class ClientSecretHasher {
  /**
   * What an unknown client's secret is checked against: a hash of a random secret with the same
   * scheme and salt size as a real one, so that refusing an unknown client does the same hashing
   * as refusing a wrong secret and the answer time does not tell which client ids exist.
   */
  readonly unknownClientHash = this.hash(generateClientSecret());

  hash(secret: string): string {
    const salt = randomBytes(SALT_BYTES);
    return [
      SCHEME,
      salt.toString('base64url'),
      this.digest(salt, secret).toString('base64url'),
    ].join('$');
  }

  /** Constant-time check of `secret` against a stored hash (unknownClientHash for no client). */
  verify(secret: string, stored: string): boolean {
    const [scheme, salt, expected] = stored.split('$');
    const actual = this.digest(Buffer.from(salt ?? '', 'base64url'), secret);
    const wanted = Buffer.from(expected ?? '', 'base64url');
    const equal = actual.length === wanted.length && timingSafeEqual(actual, wanted);
    return equal && scheme === SCHEME;
  }

  /** The keyed hash itself: HMAC-SHA256 of the secret under the salt. */
  digest(salt: Buffer, secret: string): Buffer {
    return createHmac('sha256', salt).update(secret, 'utf8').digest();
  }
}
