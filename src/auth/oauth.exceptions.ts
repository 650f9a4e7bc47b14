import { ApiException, NotFoundApiException } from '../common/exceptions/api.exception.js';

/** RFC 6749 §5.2 error: `{"error": "...", "error_description": "..."}`. */
export abstract class OAuthException extends ApiException {
  abstract readonly error: string;

  override body() {
    return { error: this.error, error_description: this.message };
  }
}

export class InvalidRequestException extends OAuthException {
  readonly status = 400;
  readonly error = 'invalid_request';
}

/**
 * One answer for an unknown client, a wrong secret and a disabled client, so that it tells an
 * attacker nothing. RFC 6749 §5.2: a Basic challenge when the client tried Basic.
 */
export class InvalidClientException extends OAuthException {
  readonly status = 401;
  readonly error = 'invalid_client';

  constructor(usedBasic: boolean) {
    super('Client authentication failed.');
    if (usedBasic) this.headers['WWW-Authenticate'] = 'Basic realm="oauth"';
  }
}

export class InvalidGrantException extends OAuthException {
  readonly status = 400;
  readonly error = 'invalid_grant';

  constructor() {
    super('The username or password is incorrect.');
  }
}

export class UnauthorizedClientException extends OAuthException {
  readonly status = 400;
  readonly error = 'unauthorized_client';
}

export class UnsupportedGrantTypeException extends OAuthException {
  readonly status = 400;
  readonly error = 'unsupported_grant_type';

  constructor() {
    super('The grant_type must be client_credentials or password.');
  }
}

export class InvalidScopeException extends OAuthException {
  readonly status = 400;
  readonly error = 'invalid_scope';

  constructor() {
    super('The requested scope is empty, unknown or not allowed for this client.');
  }
}

/** docs/contract.md §2's 429, used by the failed-attempt limits of the token endpoint. */
export class TooManyAttemptsException extends ApiException {
  readonly status = 429;

  constructor(retryAfterSeconds: number) {
    super('Too many requests.');
    this.headers['Retry-After'] = String(retryAfterSeconds);
  }
}

/**
 * 503 with Retry-After: more password checks at once than the hashing threads serve in time. In
 * RFC 6749's shape, as every 503 of the OAuth endpoints.
 */
export class PasswordChecksBusyException extends OAuthException {
  readonly status = 503;
  readonly error = 'temporarily_unavailable';

  constructor(retryAfterSeconds: number) {
    super('The service is temporarily unavailable.');
    this.headers['Retry-After'] = String(retryAfterSeconds);
  }
}

export class ClientNotFoundException extends NotFoundApiException {
  constructor() {
    super('Client not found.');
  }
}

export class UsernameTakenException extends ApiException {
  readonly status = 409;

  constructor() {
    super('The username is already taken.');
  }
}

/** Refused by the CLI's tokens:revoke: not a token this service signed. */
export class NotOurTokenException extends ApiException {
  readonly status = 400;

  constructor() {
    super('The token is not a valid token issued by this service.');
  }
}
