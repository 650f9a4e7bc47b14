/**
 * Every scope a token can carry (docs/contract.md §4), with what it allows as the OpenAPI
 * document's OAuth 2.0 flows list it: a new scope is one line here.
 */
export const SCOPE_DESCRIPTIONS = {
  'customers:read': 'Read customers and their company details.',
  'customers:write': 'Create customers and change their company details.',
  'webhooks:read': "List and read the calling client's own webhook events.",
  'webhooks:write': 'Deliver webhooks.',
} as const;
export type Scope = keyof typeof SCOPE_DESCRIPTIONS;

/** The scopes, in the order above. */
export const SCOPES = Object.keys(SCOPE_DESCRIPTIONS) as readonly Scope[];

export const isScope = (value: string): value is Scope => Object.hasOwn(SCOPE_DESCRIPTIONS, value);
