import { ExecutionContext, Injectable } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import type { FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { authorizationHeaders } from '../authorization-headers.js';
import {
  InsufficientScopeException,
  RepeatedAuthorizationException,
  UnauthenticatedException,
} from '../bearer.exceptions.js';
import type { Principal } from '../principal.js';
import type { Scope } from '../scopes.js';
import type { BearerRequest } from '../strategies/bearer.strategy.js';

/**
 * Fastify route config entry set by @RequireScopes(): the scopes the route's token needs. In the
 * route's config rather than Nest metadata alone, because two readers run outside Nest's
 * pipeline: the header check before the body (BearerHeaderCheck) and the exception filter,
 * which runs this guard before answering a body Fastify refused (docs/contract.md §2).
 */
export const BEARER_SCOPES = 'bearerScopes';

declare module 'fastify' {
  interface FastifyContextConfig {
    [BEARER_SCOPES]?: readonly Scope[];
  }
  interface FastifyRequest {
    /** The token's principal, set by BearerAuthGuard; read with @CurrentPrincipal(). */
    user?: Principal;
  }
}

/**
 * passport's bearer guard (the 'bearer' strategy: BearerStrategy) plus the route's scopes:
 * 401 without a valid token, 403 without the scopes, else `request.user` is the token's
 * Principal. Apply it with @RequireScopes().
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard('bearer') {
  override getRequest(context: ExecutionContext): BearerRequest {
    const { raw } = context.switchToHttp().getRequest<FastifyRequest>();
    return { headers: { authorization: singleAuthorization(raw) }, socket: raw.socket };
  }

  /**
   * passport's outcome in the contract's answers (its own challenges are never sent): an error
   * (e.g. the database) goes to the exception filter as it is; a missing or refused token is
   * 401 with RFC 6750's challenge; a token without the route's scopes is 403.
   */
  override handleRequest<T = Principal>(
    error: unknown,
    principal: Principal | false | null,
    challenge: unknown,
    context: ExecutionContext,
    status?: unknown,
  ): T {
    if (error) throw error;
    if (!principal) {
      // passport-http-bearer: status 400 for a header that is not two words, a challenge with
      // error="invalid_token" for a token the strategy refused, a bare challenge for no token.
      const invalid =
        status === 400 || (typeof challenge === 'string' && challenge.includes('invalid_token'));
      throw new UnauthenticatedException(invalid);
    }
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const scopes = request.routeOptions.config[BEARER_SCOPES] ?? [];
    for (const scope of scopes) {
      if (!principal.scopes.includes(scope)) throw new InsufficientScopeException(scopes);
    }
    request.user = principal;
    return principal as T;
  }
}

/** The one Authorization header of the request, if any; two are refused. */
export function singleAuthorization(raw: IncomingMessage): string | undefined {
  const [authorization, another] = authorizationHeaders(raw);
  if (another !== undefined) throw new RepeatedAuthorizationException();
  return authorization;
}
