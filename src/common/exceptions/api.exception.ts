/**
 * Base of every error the service means to show its callers. The global filter renders
 * `status`, `headers` and `body()` as they are; anything that is not an ApiException is
 * mapped by status or hidden behind a plain 500.
 */
export abstract class ApiException extends Error {
  abstract readonly status: number;
  readonly headers: Record<string, string> = {};

  body(): Record<string, unknown> {
    return { message: this.message };
  }
}

/**
 * The request's input refused (its body, its query string), not the request itself. The
 * exception filter answers it after the route's token, scope and resource have been checked
 * (CONTRACT §2's order), and at /oauth/* as RFC 6749's invalid_request.
 */
export abstract class RefusedInputException extends ApiException {}

export type FieldErrors = Record<string, string[]>;

/**
 * The most fields a 422 names (the first ones found): a 1 MiB body of 100,000 invalid strings
 * would otherwise be answered with megabytes of messages.
 */
export const MAX_FIELD_ERRORS = 100;

/** 422 with docs/contract.md §2's `errors` map (dotted field paths → messages). */
export class ValidationFailedException extends RefusedInputException {
  readonly status = 422;

  constructor(readonly errors: FieldErrors) {
    super('The given data was invalid.');
  }

  override body() {
    const errors = Object.fromEntries(Object.entries(this.errors).slice(0, MAX_FIELD_ERRORS));
    return { message: this.message, errors };
  }
}

export class NotFoundApiException extends ApiException {
  readonly status = 404;
}

export class ServiceUnavailableApiException extends ApiException {
  readonly status = 503;
}
