import type { Scope } from './scopes.js';

/** Who is calling: set on the request by the bearer guard, read with @CurrentPrincipal(). */
export interface Principal {
  /** OAuth client the token was issued to. */
  clientId: string;
  /** User id for password-grant tokens; null for client_credentials. */
  userId: string | null;
  scopes: Scope[];
  /** The token's `jti`. */
  tokenId: string;
}
