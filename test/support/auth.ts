import { AccessTokenService } from '../../src/auth/access-tokens.service.js';
import type { Scope } from '../../src/auth/scopes.js';
import { createClient, issueToken } from '../factories/client.factory.js';
import type { TestApp } from './app.js';

/**
 * `Authorization` header value for a real access token holding `scopes`: a new client is
 * registered for them and obtains the token from POST /oauth/token (client_credentials).
 */
export async function authHeader(t: TestApp, scopes: Scope[]): Promise<string> {
  const client = await createClient(t, { scopes, grants: ['client_credentials'] });
  if (scopes.length === 0) {
    // The token endpoint requires a scope, so a scope-less token (for 403 tests) is signed
    // directly, by the same service, for that real client.
    const token = await t.app
      .get(AccessTokenService)
      .sign({ clientId: client.clientId, subject: client.clientId, scopes: [] });
    return `Bearer ${token}`;
  }
  return `Bearer ${await issueToken(t, client)}`;
}

/**
 * A webhook sender: one client, with a `webhooks:write` token to send and a `webhooks:read` token
 * to read back what it sent (a client sees only its own events).
 */
export async function senderHeaders(
  t: TestApp,
): Promise<{ write: string; read: string; clientId: string }> {
  const client = await createClient(t, {
    scopes: ['webhooks:write', 'webhooks:read'],
    grants: ['client_credentials'],
  });
  return {
    write: `Bearer ${await issueToken(t, client, ['webhooks:write'])}`,
    read: `Bearer ${await issueToken(t, client, ['webhooks:read'])}`,
    clientId: client.clientId,
  };
}
