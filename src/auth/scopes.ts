/** Every scope a token can carry (docs/contract.md §4). */
export const SCOPES = [
  'customers:read',
  'customers:write',
  'webhooks:read',
  'webhooks:write',
] as const;
export type Scope = (typeof SCOPES)[number];

/** What each scope allows, as the OpenAPI document's OAuth 2.0 flows list them. */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'customers:read': 'Read customers and their company details.',
  'customers:write': 'Create customers and change their company details.',
  'webhooks:read': "List and read the calling client's own webhook events.",
  'webhooks:write': 'Deliver webhooks.',
};

export const isScope = (value: string): value is Scope =>
  (SCOPES as readonly string[]).includes(value);
