import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-http-bearer';
import type { Principal } from '../principal.js';
import { TokenVerifier } from '../token-verifier.service.js';

/**
 * What passport sees of a request (BearerAuthGuard.getRequest()): its one Authorization header
 * and its connection. No query and no body, so that a token sent there is as good as none
 * (RFC 6750 §2.1 header only, docs/contract.md §4), and passport's per-request helpers (logIn,
 * authInfo…) land on this short-lived object, not on Fastify's request.
 */
export interface BearerRequest {
  headers: { authorization?: string };
  /** The socket: a keep-alive client resending its header skips hashing it (TokenVerifier). */
  socket: object;
}

/**
 * passport-http-bearer's strategy ('bearer'): it reads `Authorization: Bearer <token>`, and the
 * token is checked by the TokenVerifier (signature once, then expiry, revocation, key retirement
 * and client state on every request). A token it refuses is `false`: passport's invalid_token.
 */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly verifier: TokenVerifier) {
    super({ realm: 'api', passReqToCallback: true });
  }

  validate(request: BearerRequest, token: string): Principal | Promise<Principal | null> {
    // A token seen before is answered from memory, without a promise of its own.
    return (
      this.verifier.fromCache(request.headers.authorization, request.socket) ??
      this.verifier.verify(token)
    );
  }
}
