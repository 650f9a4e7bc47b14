import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { ApiException } from '../../common/exceptions/api.exception.js';
import type { Principal } from '../principal.js';

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
 * STUB until the AuthModule lands (issue 3): accepts `Bearer stub.<base64url JSON Principal>`.
 * The real guard verifies the signed JWT; routes and tests only rely on the interface:
 * 401 with WWW-Authenticate, and `request.user` set to the Principal.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{
      headers: Record<string, string | undefined>;
      user?: Principal;
    }>();
    const header = request.headers.authorization;
    if (!header) throw new UnauthenticatedException(false);
    const match = /^Bearer stub\.([A-Za-z0-9_-]+)$/.exec(header);
    if (!match) throw new UnauthenticatedException(true);
    try {
      request.user = JSON.parse(Buffer.from(match[1], 'base64url').toString()) as Principal;
    } catch {
      throw new UnauthenticatedException(true);
    }
    return true;
  }
}
