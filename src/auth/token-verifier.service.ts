import { Injectable } from '@nestjs/common';
import { hash } from 'node:crypto';
import {
  AccessTokenService,
  CLOCK_LEEWAY_SECONDS,
  type AccessTokenClaims,
} from './access-tokens.service.js';
import { BoundedCache } from './bounded-cache.js';
import type { Principal } from './principal.js';
import { isScope } from './scopes.js';
import { SigningKeysService } from './signing-keys.service.js';
import { TokenStateService } from './token-state.service.js';

export interface ActiveToken {
  principal: Principal;
  claims: AccessTokenClaims;
  /** The key that signed it: a token of a retired key is refused, cached or not. */
  kid: string;
}

const CACHE_ENTRIES = 10_000;
// Far longer than any token we sign; refused before hashing or parsing.
const MAX_TOKEN_LENGTH = 4096;

/**
 * Answers "is this bearer token acceptable right now, and for whom?" for every protected request.
 * A token's signature is checked once: the result is cached (keyed by a hash of the token, so the
 * cache holds no usable token) until `exp`. Revocation and client state are checked on every
 * request, in memory, so a cached token is refused as soon as it is revoked.
 */
@Injectable()
export class TokenVerifier {
  private readonly verified = new BoundedCache<string, ActiveToken>(CACHE_ENTRIES);
  /** Per open connection: its last Authorization header and that header's cache key. */
  private readonly lastHeader = new WeakMap<object, { authorization: string; key: string }>();

  constructor(
    private readonly tokens: AccessTokenService,
    private readonly state: TokenStateService,
    private readonly keys: SigningKeysService,
  ) {}

  async verify(token: string): Promise<Principal | null> {
    return (await this.active(token))?.principal ?? null;
  }

  async active(token: string): Promise<ActiveToken | null> {
    if (token.length > MAX_TOKEN_LENGTH) return null;
    const key = cacheKey(token);
    let entry = this.verified.get(key);
    if (!entry) {
      const signed = await this.tokens.verifySigned(token);
      if (!signed) return null;
      const { claims, kid } = signed;
      entry = { claims, kid, principal: principalOf(claims) };
      this.verified.set(key, entry);
    }
    const accepted = this.accepts(entry, key);
    return accepted === true || (accepted !== false && (await accepted)) ? entry : null;
  }

  /**
   * Expiry, revocation and the key's retirement (such a token also leaves the cache), then the client's
   * state: `true`/`false` when memory decides, a promise when the client must be looked up.
   */
  private accepts(entry: ActiveToken, key: string): boolean | Promise<boolean> {
    const { claims } = entry;
    if (
      claims.exp + CLOCK_LEEWAY_SECONDS <= Date.now() / 1000 ||
      this.state.isRevoked(claims.jti) ||
      !this.keys.verificationKey(entry.kid)
    ) {
      this.verified.delete(key);
      return false;
    }
    return this.state.clientAccepts(claims);
  }

  /**
   * The principal of an `Authorization: Bearer <token>` header whose token was verified before
   * and is still acceptable, decided synchronously from memory; null when that needs more work
   * (first sight of the token, a malformed header, a client state not yet loaded). The guard
   * then takes the full path, which also gives every refusal its exact answer.
   *
   * `connection` (the request's socket) lets a keep-alive client that sends the same header
   * again skip hashing it: the connection remembers its last header and that header's cache key
   * for as long as it is open. Hashing was a tenth of a cached read's CPU time here; expiry,
   * revocation and client state are still checked on every request.
   */
  fromCache(authorization: string | undefined, connection?: object): Principal | null {
    if (authorization === undefined || authorization.length > MAX_TOKEN_LENGTH + 7) return null;
    const last = connection && this.lastHeader.get(connection);
    let key: string;
    if (last?.authorization === authorization) {
      key = last.key;
    } else {
      const space = authorization.indexOf(' ');
      if (space !== 6 || authorization.slice(0, 6).toLowerCase() !== 'bearer') return null;
      const token = authorization.slice(7);
      if (token.length === 0 || token.includes(' ')) return null;
      key = cacheKey(token);
      if (connection) this.lastHeader.set(connection, { authorization, key });
    }
    const entry = this.verified.get(key);
    if (!entry) return null;
    const accepted = this.accepts(entry, key);
    if (accepted === true) return entry.principal;
    // The client's state is being looked up: the full path awaits the same lookup (shared
    // while in flight) and answers its failure; this copy must not become an unhandled rejection.
    if (accepted !== false) accepted.catch(() => undefined);
    return null;
  }

  /** Drops a revoked token from the cache (it would be refused anyway; this frees the entry). */
  forget(token: string) {
    this.verified.delete(cacheKey(token));
  }

  forgetClient(clientId: string) {
    this.verified.deleteWhere((entry) => entry.claims.client_id === clientId);
  }
}

function cacheKey(token: string) {
  return hash('sha256', token, 'base64url');
}

function principalOf(claims: AccessTokenClaims): Principal {
  return {
    clientId: claims.client_id,
    // A client_credentials token names its client as subject (RFC 9068 §2.2); user ids are never
    // client ids (integers against UUIDs).
    userId: claims.sub === claims.client_id ? null : claims.sub,
    scopes: claims.scope.split(' ').filter(isScope),
    tokenId: claims.jti,
  };
}
