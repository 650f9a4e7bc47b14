/** Every scope a token can carry (docs/contract.md §4). */
export const SCOPES = [
  'customers:read',
  'customers:write',
  'webhooks:read',
  'webhooks:write',
] as const;
export type Scope = (typeof SCOPES)[number];

export const isScope = (value: string): value is Scope =>
  (SCOPES as readonly string[]).includes(value);
