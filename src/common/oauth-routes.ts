/**
 * The RFC 6749 endpoints (`/oauth/token`, `/oauth/revoke`, `/oauth/introspect`), which differ from
 * every other route in one way each: errors as RFC 6749 §5.2 (`{error, error_description}`), form
 * bodies accepted and a repeated JSON key refused like a repeated field, and no query string read.
 */
export const OAUTH_ROUTE = /^\/oauth\//;

/** Headers of every answer of those routes, errors included (RFC 6749 §5.1). */
export const OAUTH_NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };
