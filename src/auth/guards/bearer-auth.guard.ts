import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import { ApiException } from '../../common/exceptions/api.exception.js';
import { RouteMetadataCache } from '../../common/route-metadata.js';
import type { Principal } from '../principal.js';
import type { Scope } from '../scopes.js';
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

export class InsufficientScopeException extends ApiException {
  readonly status = 403;
  constructor(scopes: Scope[]) {
    super('The token does not grant the scope this action needs.');
    this.headers['WWW-Authenticate'] =
      `Bearer realm="api", error="insufficient_scope", scope="${scopes.join(' ')}"`;
  }
}

/** Route metadata: the scopes a route requires (set by @RequireScopes()). */
export const REQUIRED_SCOPES = Symbol('required-scopes');

type AuthenticatedRequest = FastifyRequest & { user?: Principal };

/**
 * Requires `Authorization: Bearer <access token>` (the BearerStrategy), sets `request.user` to
 * the token's Principal (401 otherwise), then requires every scope of the route's
 * @RequireScopes() (403 otherwise). Use through @RequireScopes().
 *
 * One guard for both checks, and a token already verified and still acceptable is answered
 * from the verifier's cache without entering passport (whose per-request closures and promise
 * cost more than the check itself): this runs on every protected request. Every other request,
 * and so every refusal of a token, takes the passport strategy's path.
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard('bearer') {
  private readonly required: RouteMetadataCache<Scope[]>;

  constructor(
    private readonly verifier: TokenVerifier,
    reflector: Reflector,
  ) {
    super();
    this.required = new RouteMetadataCache(reflector, REQUIRED_SCOPES, []);
  }

  override canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const principal = this.verifier.fromCache(request.headers.authorization, request.raw.socket);
    if (principal === null) return this.authenticate(context, request);
    request.user = principal;
    return this.authorize(context, principal);
  }

  private async authenticate(context: ExecutionContext, request: AuthenticatedRequest) {
    await super.canActivate(context); // throws the 401 (handleRequest) unless authenticated
    return this.authorize(context, request.user!);
  }

  private authorize(context: ExecutionContext, principal: Principal): true {
    const required = this.required.get(context);
    if (!required.every((scope) => principal.scopes.includes(scope))) {
      throw new InsufficientScopeException(required);
    }
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
