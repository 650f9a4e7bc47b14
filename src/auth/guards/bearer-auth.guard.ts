import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { BearerAuthentication } from '../bearer-authentication.js';
import type { Principal } from '../principal.js';

type AuthenticatedRequest = FastifyRequest & { user?: Principal };

/**
 * Sets `request.user` to the token's Principal as BearerAuthentication decided it (before the
 * body was read: 401 without a valid token, 403 without the route's scopes). Use through
 * @RequireScopes().
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(private readonly authentication: BearerAuthentication) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const principal = this.authentication.principalOf(request);
    if (principal instanceof Promise) {
      return principal.then((p) => {
        request.user = p;
        return true;
      });
    }
    request.user = principal;
    return true;
  }
}
