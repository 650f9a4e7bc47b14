import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { jwtVerify, SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import type { Environment } from '../config/environment.js';
import type { Scope } from './scopes.js';
import { SigningKeysService } from './signing-keys.service.js';

/** Clock skew tolerated between instances when checking `exp` (docs/contract.md §3: at most 5 s). */
export const CLOCK_LEEWAY_SECONDS = 5;

/** RFC 9068 access token claims. */
export interface AccessTokenClaims {
  iss: string;
  aud: string;
  /** The client id (client_credentials) or the user id (password). */
  sub: string;
  client_id: string;
  scope: string;
  jti: string;
  iat: number;
  exp: number;
}

const REQUIRED_CLAIMS = ['iss', 'aud', 'sub', 'client_id', 'scope', 'jti', 'iat', 'exp'];

/** Signs access tokens and checks their signature and claims; knows nothing of revocation. */
@Injectable()
export class AccessTokenService {
  readonly ttlSeconds: number;
  private readonly issuer: string;
  private readonly audience: string;

  constructor(
    private readonly keys: SigningKeysService,
    config: ConfigService<Environment, true>,
  ) {
    this.ttlSeconds = config.get('TOKEN_TTL_SECONDS', { infer: true });
    this.issuer = config.get('TOKEN_ISSUER', { infer: true });
    this.audience = config.get('TOKEN_AUDIENCE', { infer: true });
  }

  async sign(grant: { clientId: string; subject: string; scopes: Scope[] }): Promise<string> {
    const { kid, alg, key } = this.keys.signing;
    const iat = Math.floor(Date.now() / 1000);
    return new SignJWT({ client_id: grant.clientId, scope: grant.scopes.join(' ') })
      .setProtectedHeader({ alg, typ: 'at+jwt', kid })
      .setIssuer(this.issuer)
      .setAudience(this.audience)
      .setSubject(grant.subject)
      .setJti(randomUUID())
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.ttlSeconds)
      .sign(key);
  }

  /**
   * The claims of a token we signed that has not expired, or null. Pinned: only our keys (by
   * `kid`) and their algorithms, `typ: at+jwt`, our issuer and audience, `iat` not ahead of now.
   * `alg: none`, HMAC with a public key, unknown keys and foreign issuers all fail here.
   *
   * `anyIssuer`: the operator's revocation (CLI) accepts any token our keys signed, whatever its
   * `iss` and `aud` (a token issued under another TOKEN_ISSUER must still be revocable).
   */
  async decode(
    token: string,
    options: { anyIssuer?: boolean } = {},
  ): Promise<AccessTokenClaims | null> {
    return (await this.verifySigned(token, options))?.claims ?? null;
  }

  /** decode(), with the `kid` of the key that verified the token (retiring it refuses them). */
  async verifySigned(
    token: string,
    { anyIssuer = false }: { anyIssuer?: boolean } = {},
  ): Promise<{ claims: AccessTokenClaims; kid: string } | null> {
    if (!isCanonical(token)) return null;
    try {
      const { payload, protectedHeader } = await jwtVerify(
        token,
        (header) => {
          const key = this.keys.verificationKey(header.kid);
          if (!key || key.alg !== header.alg) throw new Error('unknown key');
          return key.key;
        },
        {
          algorithms: this.keys.algorithms,
          typ: 'at+jwt',
          ...(anyIssuer ? {} : { issuer: this.issuer, audience: this.audience }),
          clockTolerance: CLOCK_LEEWAY_SECONDS,
          requiredClaims: REQUIRED_CLAIMS,
        },
      );
      const claims = payload as unknown as AccessTokenClaims;
      const valid =
        typeof claims.sub === 'string' &&
        typeof claims.client_id === 'string' &&
        typeof claims.scope === 'string' &&
        typeof claims.jti === 'string' &&
        claims.jti.length <= 64 &&
        typeof claims.iat === 'number' &&
        // Issued in the future: not by one of our instances (their clocks agree within the leeway).
        claims.iat <= Date.now() / 1000 + CLOCK_LEEWAY_SECONDS;
      return valid ? { claims, kid: protectedHeader.kid! } : null;
    } catch {
      return null;
    }
  }
}

/**
 * Whether each part of a compact JWS is base64url as this service writes it: no padding, and no
 * bits set past the last byte. The decoder accepts other spellings of the same bytes (`…==`, a
 * last character with other unused bits), so one token would be valid under several strings.
 */
function isCanonical(token: string): boolean {
  const parts = token.split('.');
  return (
    parts.length === 3 &&
    parts.every(
      (part) =>
        BASE64URL.test(part) && Buffer.from(part, 'base64url').toString('base64url') === part,
    )
  );
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;
