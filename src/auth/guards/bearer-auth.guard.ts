import { Injectable } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { ApiException } from '../../common/exceptions/api.exception.js';
import type { Principal } from '../principal.js';

/** 401 with RFC 6750's challenge: a bare one without a token, `invalid_token` for a bad one. */
export class UnauthenticatedException extends ApiException {
  readonly status = 401;
  constructor(invalidToken: boolean) {
    super(invalidToken ? 'The access token is invalid, expired or revoked.' : 'Unauthenticated.');
    this.headers['WWW-Authenticate'] = invalidToken
      ? 'Bearer realm="api", error="invalid_token"'
      : 'Bearer realm="api"';
  }
}

/**
 * Requires `Authorization: Bearer <access token>` (the BearerStrategy) and sets `request.user`
 * to the token's Principal. Use through @RequireScopes(), which adds the scope check.
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard('bearer') {
  override handleRequest<TUser = Principal>(err: unknown, user: unknown, info: unknown): TUser {
    if (err) throw err;
    if (user) return user as TUser;
    // passport-http-bearer fails a request without a token with the bare challenge string; a
    // refused token with error="invalid_token"; a malformed header with status 400 (no challenge).
    const noToken = typeof info === 'string' && !info.includes('error=');
    throw new UnauthenticatedException(!noToken);
  }
}
