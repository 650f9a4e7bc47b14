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
    const errors = new Map<string, string[]>();
    for (const [path, messages] of Object.entries(this.errors).slice(0, MAX_FIELD_ERRORS)) {
      const shown = shownPath(path);
      const named = shown === path ? messages : messages.map((m) => m.split(path).join(shown));
      errors.set(shown, [...(errors.get(shown) ?? []), ...named]);
    }
    return { message: this.message, errors: Object.fromEntries(errors) };
  }
}

/** The longest field path a 422 echoes whole; a longer one (a caller's key) is cut, with `…`. */
export const MAX_SHOWN_PATH = 200;

/**
 * A field path as a 422 names it: at most MAX_SHOWN_PATH characters, and well-formed text (a
 * caller's key may hold a lone surrogate, `"\ud800"`, which strict JSON parsers refuse to read:
 * it is shown as U+FFFD). Otherwise a 1 MiB key would be echoed twice, key and message.
 */
function shownPath(path: string): string {
  const cut = path.length > MAX_SHOWN_PATH ? `${path.slice(0, MAX_SHOWN_PATH - 1)}…` : path;
  return cut.toWellFormed();
}

export class NotFoundApiException extends ApiException {
  readonly status = 404;
}

export class ServiceUnavailableApiException extends ApiException {
  readonly status = 503;
}
