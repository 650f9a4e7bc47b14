import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { ClientsService } from '../../src/auth/clients.service.js';
import type { GrantType } from '../../src/auth/grant-types.js';
import { SCOPES, type Scope } from '../../src/auth/scopes.js';
import { UsersService } from '../../src/auth/users.service.js';
import type { TestApp } from '../support/app.js';

export interface TestClient {
  clientId: string;
  clientSecret: string;
  scopes: Scope[];
  grants: GrantType[];
}

/** A registered OAuth client (through the real service); by default every scope, both grants. */
export async function createClient(
  t: TestApp,
  overrides: Partial<Pick<TestClient, 'scopes' | 'grants'>> & { name?: string } = {},
): Promise<TestClient> {
  const scopes = overrides.scopes ?? [...SCOPES];
  const grants = overrides.grants ?? ['client_credentials', 'password'];
  const created = await t.app
    .get(ClientsService)
    .create({ name: overrides.name ?? 'test client', scopes, grants });
  return { ...created, scopes, grants };
}

export interface TestUser {
  id: number;
  username: string;
  password: string;
}

export async function createUser(t: TestApp, overrides: Partial<TestUser> = {}): Promise<TestUser> {
  const username = overrides.username ?? `user-${randomBytes(4).toString('hex')}`;
  const password = overrides.password ?? `pw-${randomBytes(8).toString('hex')}`;
  const { id } = await t.app.get(UsersService).create(username, password);
  return { id, username, password };
}

/** RFC 6749 §2.3.1 client_secret_basic header. */
export function basicAuth(clientId: string, clientSecret: string): string {
  const encode = (v: string) => encodeURIComponent(v).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`).toString('base64')}`;
}

/** POST /oauth/token with the client's credentials in a JSON body. */
export function tokenRequest(
  t: TestApp,
  client: Pick<TestClient, 'clientId' | 'clientSecret'>,
  body: Record<string, unknown>,
) {
  return request(t.http)
    .post('/oauth/token')
    .send({ client_id: client.clientId, client_secret: client.clientSecret, ...body });
}

/** A client_credentials access token for `scopes`. */
export async function issueToken(t: TestApp, client: TestClient, scopes = client.scopes) {
  const res = await tokenRequest(t, client, {
    grant_type: 'client_credentials',
    scope: scopes.join(' '),
  });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${res.text}`);
  return res.body.access_token as string;
}

/** A password-grant access token of `user` through `client`. */
export async function issueUserToken(
  t: TestApp,
  client: TestClient,
  user: TestUser,
  scopes = client.scopes,
) {
  const res = await tokenRequest(t, client, {
    grant_type: 'password',
    username: user.username,
    password: user.password,
    scope: scopes.join(' '),
  });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${res.text}`);
  return res.body.access_token as string;
}
