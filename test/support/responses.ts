/** Error bodies of docs/contract.md §2, pinned once for every test. */
export const errors = {
  routeNotFound: { message: 'Route not found.' },
  customerNotFound: { message: 'Customer not found.' },
  malformedJson: { message: 'The request body is malformed: it is not valid JSON.' },
  tooLarge: { message: 'The request body is larger than 1 MiB.' },
  unsupportedMediaType: {
    message: 'The request body must be JSON (Content-Type: application/json).',
  },
  internal: { message: 'Internal server error.' },
  tooManyRequests: { message: 'Too many requests.' },
  databaseUnavailable: { message: 'The service is temporarily unavailable.' },
  notReady: { message: 'The database cannot be reached.' },
  databaseLocked: { message: 'The database is locked by another process.' },
  unauthenticated: { message: 'Unauthenticated.' },
  invalidToken: { message: 'The access token is invalid, expired or revoked.' },
  insufficientScope: { message: 'The token does not grant the scope this action needs.' },
  webhookNotFound: { message: 'Webhook not found.' },
  webhookFailed: (id: string) => ({ message: 'The webhook could not be processed.', id }),
  invalid: (fields: Record<string, string[]>) => ({
    message: 'The given data was invalid.',
    errors: fields,
  }),
} as const;

/** RFC 6750 WWW-Authenticate challenges of docs/contract.md §4. */
export const bearerChallenges = {
  missing: 'Bearer realm="api"',
  invalidToken: 'Bearer realm="api", error="invalid_token"',
  insufficientScope: (scopes: string) =>
    `Bearer realm="api", error="insufficient_scope", scope="${scopes}"`,
} as const;

const oauth = (error: string, description: string) => ({ error, error_description: description });

/** RFC 6749 §5.2 bodies of the /oauth endpoints (docs/contract.md §3). */
export const oauthErrors = {
  invalidRequest: (description: string) => oauth('invalid_request', description),
  missingParameter: (name: string) =>
    oauth('invalid_request', `The ${name} parameter is required.`),
  repeatedParameter: (name: string) =>
    oauth('invalid_request', `The ${name} parameter must not be repeated.`),
  notAString: (name: string) => oauth('invalid_request', `The ${name} parameter must be a string.`),
  bodyNotObject: oauth('invalid_request', 'The request body must be a JSON object or a form.'),
  unsupportedBody: oauth(
    'invalid_request',
    'The request body must be JSON or application/x-www-form-urlencoded.',
  ),
  malformedJson: oauth('invalid_request', 'The request body is malformed: it is not valid JSON.'),
  credentialsTwice: oauth(
    'invalid_request',
    'Send the client credentials either with HTTP Basic or in the body, not both.',
  ),
  repeatedAuthorization: oauth(
    'invalid_request',
    'The request must carry one Authorization header, not several.',
  ),
  poisonedBody: oauth(
    'invalid_request',
    'The request body contains a forbidden "__proto__" or "constructor.prototype" key.',
  ),
  tooLarge: oauth('invalid_request', 'The request body is larger than 16 KiB.'),
  /** Every 503 there: a database away, password hashing saturated, the service stopping. */
  unavailable: oauth('temporarily_unavailable', 'The service is temporarily unavailable.'),
  invalidClient: oauth('invalid_client', 'Client authentication failed.'),
  invalidGrant: oauth('invalid_grant', 'The username or password is incorrect.'),
  grantNotAllowed: (grant: string) =>
    oauth('unauthorized_client', `This client may not use the ${grant} grant.`),
  notYourToken: oauth('unauthorized_client', 'The token was not issued to this client.'),
  unsupportedGrantType: oauth(
    'unsupported_grant_type',
    'The grant_type must be client_credentials or password.',
  ),
  invalidScope: oauth(
    'invalid_scope',
    'The requested scope is empty, unknown or not allowed for this client.',
  ),
} as const;

/** Headers every answer of the /oauth endpoints carries (RFC 6749 §5.1). */
export const noStore = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

/** Signed webhook deliveries refused (docs/contract.md §6): 401 with this challenge. */
export const webhookSignature = {
  challenge: 'WebhookSignature realm="webhooks"',
  missing: (names: string) => ({
    message: `The webhook signature is missing: this client signs its deliveries, so the webhook-id, webhook-timestamp and webhook-signature headers are required (missing: ${names}).`,
  }),
  malformedTimestamp: {
    message: 'The webhook-timestamp header is malformed: it must be Unix time in seconds.',
  },
  malformedSignature: {
    message:
      'The webhook-signature header is malformed: it must be space-separated v1,<base64> signatures.',
  },
  stale: { message: "The webhook-timestamp is more than 5 minutes away from the server's clock." },
  mismatch: {
    message:
      'The webhook signature does not match this delivery (its webhook-id, webhook-timestamp and body as sent).',
  },
  unavailable: { message: 'The webhook signature cannot be checked right now.' },
} as const;
