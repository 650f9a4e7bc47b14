/**
 * The RFC 6749 endpoints (`/oauth/token`, `/oauth/revoke`, `/oauth/introspect`), which differ from
 * every other route in one way each: errors as RFC 6749 §5.2 (`{error, error_description}`), form
 * bodies accepted and a repeated JSON key refused like a repeated field, and no query string read.
 */
export const OAUTH_ROUTE = /^\/oauth\//;
