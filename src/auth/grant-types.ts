/** The grants a client may be registered for (docs/contract.md §3). */
export const GRANT_TYPES = ['client_credentials', 'password'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];

export const isGrantType = (value: string): value is GrantType =>
  (GRANT_TYPES as readonly string[]).includes(value);
