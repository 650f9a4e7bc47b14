import type { Scope } from '../../src/auth/scopes.js';
import type { TestApp } from './app.js';

/**
 * `Authorization` header value for a token holding `scopes`.
 * STUB until the AuthModule lands: the real version obtains a token from POST /oauth/token.
 */
export async function authHeader(_t: TestApp, scopes: Scope[]): Promise<string> {
  const principal = { clientId: 'test-client', userId: null, scopes, tokenId: 'test' };
  return `Bearer stub.${Buffer.from(JSON.stringify(principal)).toString('base64url')}`;
}
