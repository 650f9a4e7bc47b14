import { ExecutionContext, Injectable } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { ApiException } from '../../common/exceptions/api.exception.js';
import type { Principal } from '../principal.js';
import { TokenVerifier } from '../token-verifier.service.js';

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
 *
 * A token already verified and still acceptable is answered from the verifier's cache without
 * entering passport (whose per-request closures and promise cost more than the check itself);
 * every other request, and so every refusal, takes the passport strategy's path.
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard('bearer') {
  constructor(private readonly verifier: TokenVerifier) {
    super();
  }

  override canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest & { user?: Principal }>();
    const principal = this.verifier.fromCache(request.headers.authorization);
    if (principal === null) return super.canActivate(context) as Promise<boolean>;
    request.user = principal;
    return true;
  }

  override handleRequest<TUser = Principal>(err: unknown, user: unknown, info: unknown): TUser {
    if (err) throw err;
    if (user) return user as TUser;
    // passport-http-bearer fails a request without a token with the bare challenge string; a
    // refused token with error="invalid_token"; a malformed header with status 400 (no challenge).
    const noToken = typeof info === 'string' && !info.includes('error=');
    throw new UnauthenticatedException(!noToken);
  }
}
