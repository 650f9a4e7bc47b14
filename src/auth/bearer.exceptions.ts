import { ApiException } from '../common/exceptions/api.exception.js';
import type { Scope } from './scopes.js';

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

/** Two Authorization headers (CONTRACT §4): ambiguous, so neither is believed. */
export class RepeatedAuthorizationException extends ApiException {
  readonly status = 400;
  constructor() {
    super('The request must carry one Authorization header, not several.');
    this.headers['WWW-Authenticate'] = 'Bearer realm="api", error="invalid_request"';
  }
}

/** 403 with RFC 6750's challenge naming the scopes the route needs. */
export class InsufficientScopeException extends ApiException {
  readonly status = 403;
  constructor(scopes: readonly Scope[]) {
    super('The token does not grant the scope this action needs.');
    this.headers['WWW-Authenticate'] =
      `Bearer realm="api", error="insufficient_scope", scope="${scopes.join(' ')}"`;
  }
}
