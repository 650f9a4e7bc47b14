import type { Scope } from '../../src/auth/scopes.js';
import { runNode, type ServerProcess } from './processes.js';

/**
 * `Authorization` header for a server running in a child process (startServer()), obtained as an
 * operator and a platform would: `clients:create` through the built CLI on the server's database,
 * then POST /oauth/token (client_credentials) to the running server.
 */
export async function remoteAuthHeader(
  server: ServerProcess,
  databaseUrl: string,
  scopes: Scope[],
): Promise<string> {
  const created = await runNode(
    'dist/src/cli.js',
    ['clients:create', '--name', 'remote-test', '--scopes', scopes.join(' ')],
    { DATABASE_URL: databaseUrl },
  );
  if (created.code !== 0) throw new Error(`clients:create failed: ${created.stderr}`);
  const { client_id, client_secret } = JSON.parse(created.stdout) as Record<string, string>;
  const res = await fetch(`${server.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id,
      client_secret,
      scope: scopes.join(' '),
    }),
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token)
    throw new Error(`token request failed: ${res.status}`);
  return `Bearer ${body.access_token}`;
}
