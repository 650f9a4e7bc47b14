import type { FieldErrors } from './exceptions/api.exception.js';
import { firstProblem } from './pipes/oauth-parameters.js';

/**
 * The RFC 6749 endpoints (`/oauth/token`, `/oauth/revoke`, `/oauth/introspect`), which differ from
 * every other route in one way each: errors as RFC 6749 §5.2 (`{error, error_description}`), form
 * bodies accepted and a repeated JSON key refused like a repeated field, and no query string read.
 */
export const OAUTH_ROUTE = /^\/oauth\//;

/**
 * Whether a request is one of theirs: by its path, or by the route it reached (`/%6Fauth/token`
 * reaches the token route too).
 */
export function isOAuthRequest(request: { url: string; routeOptions?: { url?: string } }) {
  return OAUTH_ROUTE.test(request.url) || OAUTH_ROUTE.test(request.routeOptions?.url ?? '');
}

/**
 * The largest body those routes read. Their requests are a few short fields (a token is at most
 * 4 KiB); a larger limit let one address without credentials keep the process parsing: 1 MiB of
 * `[{},{},…]` takes 0.1–0.4 s to parse, and the throttle allows 300 requests a minute.
 */
export const OAUTH_BODY_LIMIT_BYTES = 16 * 1024;

/** Headers of every answer of those routes, errors included (RFC 6749 §5.1). */
export const OAUTH_NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

/** An error answer before it is sent. */
export interface ErrorAnswer {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

/**
 * Statuses the OAuth endpoints keep: size limits (the request must shrink, not change) and an
 * `Expect` the server does not meet (417: the request must drop it).
 */
const KEPT_STATUSES = [413, 414, 417, 431];

/**
 * An error answer of the contract's `{message}` shape as the OAuth endpoints send it: RFC 6749
 * §5.2's `{error, error_description}`. A refusal of the request is 400 `invalid_request` (a body
 * neither JSON nor a form, a missing Host, the validation pipe's 422 naming one of its problems:
 * firstProblem()) unless its status is a size limit (413 a body over 16 KiB, 414, 431:
 * docs/contract.md §2's statuses hold here too); 404 and 429 keep the contract's body, 503 is
 * `temporarily_unavailable` with the contract's one description, and any other failure is `server_error`.
 */
export function asOAuthError(answer: ErrorAnswer): ErrorAnswer {
  const { status } = answer;
  if (status === 404 || status === 429) return answer;
  if (status >= 500 && status !== 503) {
    return {
      ...answer,
      body: { error: 'server_error', error_description: 'Internal server error.' },
    };
  }
  if (status === 503) {
    return {
      ...answer,
      body: {
        error: 'temporarily_unavailable',
        error_description: 'The service is temporarily unavailable.',
      },
    };
  }
  const { message, errors } = answer.body as { message: unknown; errors?: FieldErrors };
  const description =
    status === 415
      ? 'The request body must be JSON or application/x-www-form-urlencoded.'
      : ((errors && firstProblem(errors)) ?? String(message));
  return {
    status: KEPT_STATUSES.includes(status) ? status : 400,
    headers: answer.headers,
    body: { error: 'invalid_request', error_description: description },
  };
}
