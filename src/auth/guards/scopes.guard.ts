import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiException } from '../../common/exceptions/api.exception.js';
import { RouteMetadataCache } from '../../common/route-metadata.js';
import { REQUIRED_SCOPES } from '../decorators/require-scopes.decorator.js';
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

/** 403 unless the authenticated principal holds every scope the route requires. */
@Injectable()
export class ScopesGuard implements CanActivate {
  private readonly required: RouteMetadataCache<Scope[]>;

  constructor(reflector: Reflector) {
    this.required = new RouteMetadataCache(reflector, REQUIRED_SCOPES, []);
  }

  canActivate(context: ExecutionContext): boolean {
    const required = this.required.get(context);
    const principal = context.switchToHttp().getRequest<{ user?: Principal }>().user;
    if (!required.every((scope) => principal?.scopes.includes(scope))) {
      throw new InsufficientScopeException(required);
    }
    return true;
  }
}
