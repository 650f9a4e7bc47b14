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

export type FieldErrors = Record<string, string[]>;

/** 422 with docs/contract.md §2's `errors` map (dotted field paths → messages). */
export class ValidationFailedException extends ApiException {
  readonly status = 422;

  constructor(readonly errors: FieldErrors) {
    super('The given data was invalid.');
  }

  override body() {
    return { message: this.message, errors: this.errors };
  }
}

export class NotFoundApiException extends ApiException {
  readonly status = 404;
}

export class ServiceUnavailableApiException extends ApiException {
  readonly status = 503;
}
