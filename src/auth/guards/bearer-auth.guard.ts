import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { ApiException } from '../../common/exceptions/api.exception.js';
import { RouteMetadataCache } from '../../common/route-metadata.js';
import { BearerAuthentication } from '../bearer-authentication.js';
import type { Principal } from '../principal.js';
import type { Scope } from '../scopes.js';

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
 * Sets `request.user` to the token's Principal as BearerAuthentication decided it (before the
 * body was read; 401 otherwise), then requires every scope of the route's @RequireScopes()
 * (403 otherwise). Use through @RequireScopes().
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  private readonly required: RouteMetadataCache<Scope[]>;

  constructor(
    private readonly authentication: BearerAuthentication,
    reflector: Reflector,
  ) {
    this.required = new RouteMetadataCache(reflector, REQUIRED_SCOPES, []);
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const principal = this.authentication.principalOf(request);
    return principal instanceof Promise
      ? principal.then((p) => this.authorize(context, request, p))
      : this.authorize(context, request, principal);
  }

  private authorize(
    context: ExecutionContext,
    request: AuthenticatedRequest,
    principal: Principal,
  ) {
    request.user = principal;
    const required = this.required.get(context);
    if (!required.every((scope) => principal.scopes.includes(scope))) {
      throw new InsufficientScopeException(required);
    }
    return true;
  }
}
