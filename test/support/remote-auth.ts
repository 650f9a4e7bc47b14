import type { Scope } from '../../src/auth/scopes.js';
import type { TestApp } from './app.js';
import { authHeader } from './auth.js';
import type { ServerProcess } from './processes.js';

/**
 * `Authorization` header for a server running in a child process (startServer()), for tests
 * that cannot use an in-process TestApp (crash durability).
 *
 * It goes through authHeader() with a TestApp-like object whose `http` is the server's base URL
 * (supertest accepts a URL where it accepts a server), so it follows authHeader() when the real
 * token issuance replaces the stub, as long as authHeader() needs nothing but HTTP. If it needs
 * more (a database handle to register a client, say), this is the one place to adapt.
 */
export async function remoteAuthHeader(server: ServerProcess, scopes: Scope[]): Promise<string> {
  const remote = { http: server.baseUrl } as unknown as TestApp;
  return authHeader(remote, scopes);
}
