import { jest } from '@jest/globals';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { ClientCredentials, ResourceOwnerPassword } from 'simple-oauth2';
import request from 'supertest';
import {
  createClient,
  createUser,
  issueToken,
  issueUserToken,
  TestClient,
} from '../factories/client.factory.js';
import { claimsFor, forgeries, signWithServiceKey } from '../factories/token.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { bearerChallenges, errors } from '../support/responses.js';
import { UNTHROTTLED } from './limits.js';
import { ProtectedModule } from './protected.module.js';

/** Everything but Date stays real when a test moves the clock. */
const REAL_TIMERS = [
  'hrtime',
  'nextTick',
  'performance',
  'queueMicrotask',
  'requestAnimationFrame',
  'cancelAnimationFrame',
  'requestIdleCallback',
  'cancelIdleCallback',
  'setImmediate',
  'clearImmediate',
  'setInterval',
  'clearInterval',
  'setTimeout',
  'clearTimeout',
] as const;

/** The bearer guard and @RequireScopes (docs/contract.md §4), on test-only routes. */
describe('bearer tokens', () => {
  let t: TestApp;
  let client: TestClient;
  let token: string;
  beforeAll(async () => {
    t = await startTestApp({ env: UNTHROTTLED, imports: [ProtectedModule] });
    client = await createClient(t, { scopes: ['customers:read', 'webhooks:read'] });
    token = await issueToken(t, client, ['customers:read']);
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (authorization?: string) => {
    const req = request(t.http).get('/test/protected');
    return authorization === undefined ? req : req.set('authorization', authorization);
  };

  const expectMissing = (res: request.Response) => {
    expect({ status: res.status, body: res.body }).toEqual({
      status: 401,
      body: errors.unauthenticated,
    });
    expect(res.headers['www-authenticate']).toBe(bearerChallenges.missing);
  };

  const expectInvalid = (res: request.Response) => {
    expect({ status: res.status, body: res.body }).toEqual({
      status: 401,
      body: errors.invalidToken,
    });
    expect(res.headers['www-authenticate']).toBe(bearerChallenges.invalidToken);
  };

  it('opens the route and hands the handler the principal', async () => {
    const res = await get(`Bearer ${token}`).expect(200);
    const jti = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).jti;
    expect(res.body).toEqual({
      data: { clientId: client.clientId, userId: null, scopes: ['customers:read'], tokenId: jti },
    });
  });

  it('accepts the scheme name in any case (RFC 7235)', async () => {
    await get(`bearer ${token}`).expect(200);
  });

  it('gives a password-grant principal its user id', async () => {
    const user = await createUser(t);
    const userToken = await issueUserToken(t, client, user, ['customers:read']);
    const res = await get(`Bearer ${userToken}`).expect(200);
    expect(res.body.data).toMatchObject({ clientId: client.clientId, userId: String(user.id) });
  });

  it('checks tokens without the database: they still verify while it is unreachable', async () => {
    const fresh = await issueToken(t, client, ['customers:read']);
    await t.db.destroy();
    try {
      await get(`Bearer ${token}`).expect(200); // verified before: from the cache
      await get(`Bearer ${fresh}`).expect(200); // never seen: signature checked in memory
      expectInvalid(await get(`Bearer ${fresh}x`));
    } finally {
      await t.db.initialize();
    }
  });

  describe('missing token: 401, WWW-Authenticate: Bearer realm="api"', () => {
    it('no Authorization header', async () => {
      expectMissing(await get());
    });

    it('another scheme', async () => {
      expectMissing(await get('Basic dXNlcjpwYXNz'));
    });

    it('the token in the query string (refused: header only)', async () => {
      expectMissing(await request(t.http).get(`/test/protected?access_token=${token}`));
    });

    it('the token in a form or JSON body (refused: header only)', async () => {
      expectMissing(await request(t.http).post('/test/protected').send({ access_token: token }));
    });
  });

  describe('invalid token: 401, error="invalid_token"', () => {
    it.each(['Bearer', 'Bearer ', 'Bearer abc.def.ghi extra', 'Bearer \u00e9\u00e9'])(
      'a malformed header %j',
      async (header) => {
        expectInvalid(await get(header));
      },
    );

    it('every forgery of the list', async () => {
      const forged = await forgeries(t, client.clientId, token);
      const accepted: string[] = [];
      for (const [name, value] of Object.entries(forged)) {
        const res = await get(`Bearer ${value}`);
        if (
          res.status !== 401 ||
          res.headers['www-authenticate'] !== bearerChallenges.invalidToken
        ) {
          accepted.push(`${name}: ${res.status}`);
        }
      }
      expect(accepted).toEqual([]);
    });

    it('the same claims signed properly are accepted (the forgeries fail for their flaw only)', async () => {
      await get(`Bearer ${await signWithServiceKey(t, claimsFor(client.clientId))}`).expect(200);
    });

    it('a token that expires while cached is refused once exp (plus 5 s leeway) has passed', async () => {
      const now = Math.floor(Date.now() / 1000);
      const shortLived = await signWithServiceKey(
        t,
        claimsFor(client.clientId, { iat: now - 60, exp: now - 3 }),
      );
      await get(`Bearer ${shortLived}`).expect(200);
      // Only the clock moves on (3 s): timers, sockets and the database run as usual.
      jest.useFakeTimers({ doNotFake: [...REAL_TIMERS], now: Date.now() + 3000 });
      try {
        expectInvalid(await get(`Bearer ${shortLived}`));
      } finally {
        jest.useRealTimers();
      }
    });

    it('a token far over any real length', async () => {
      expectInvalid(await get(`Bearer ${'a'.repeat(5000)}`));
    });

    it('a validly signed token issued more than 5 s in the future', async () => {
      const now = Math.floor(Date.now() / 1000);
      const ahead = await signWithServiceKey(t, claimsFor(client.clientId, { iat: now + 60 }));
      expectInvalid(await get(`Bearer ${ahead}`));
      // Within the clock leeway between instances it is accepted.
      const skewed = await signWithServiceKey(t, claimsFor(client.clientId, { iat: now + 2 }));
      await get(`Bearer ${skewed}`).expect(200);
    });
  });

  describe('two Authorization headers: 400 invalid_request (CONTRACT §4)', () => {
    it.each([
      ['a valid token first', () => [`Bearer ${token}`, 'Bearer other']],
      ['the same valid token twice', () => [`Bearer ${token}`, `Bearer ${token}`]],
      ['a valid token second', () => ['Basic dXNlcjpwYXNz', `Bearer ${token}`]],
    ])('%s', async (_what, headers) => {
      // superagent sends an array value as repeated header lines (its types allow it for Cookie).
      const res = await request(t.http)
        .get('/test/protected')
        .set('authorization', headers() as unknown as string);
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: { message: 'The request must carry one Authorization header, not several.' },
      });
      expect(res.headers['www-authenticate']).toBe('Bearer realm="api", error="invalid_request"');
    });
  });

  describe('insufficient scope: 403', () => {
    it('names the missing scopes in WWW-Authenticate', async () => {
      const res = await request(t.http)
        .post('/test/protected')
        .set('authorization', `Bearer ${token}`)
        .send({});
      expect({ status: res.status, body: res.body }).toEqual({
        status: 403,
        body: errors.insufficientScope,
      });
      expect(res.headers['www-authenticate']).toBe(
        bearerChallenges.insufficientScope('customers:read customers:write'),
      );
    });

    it('a token of the client with another of its scopes', async () => {
      const other = await issueToken(t, client, ['webhooks:read']);
      const res = await get(`Bearer ${other}`);
      expect(res.status).toBe(403);
      expect(res.headers['www-authenticate']).toBe(
        bearerChallenges.insufficientScope('customers:read'),
      );
    });
  });

  describe('a controller protected as the NestJS docs show: @UseGuards(BearerAuthGuard)', () => {
    const guarded = (authorization?: string) => {
      const req = request(t.http).get('/test/guarded');
      return authorization === undefined ? req : req.set('authorization', authorization);
    };

    it('opens to a valid token of any scope, with its principal', async () => {
      const other = await issueToken(t, client, ['webhooks:read']);
      const res = await guarded(`Bearer ${other}`).expect(200);
      expect(res.body).toEqual({ data: { clientId: client.clientId } });
    });

    it('answers 401 with the contract challenges, never passport defaults', async () => {
      expectMissing(await guarded());
      expectMissing(await guarded('Basic dXNlcjpwYXNz'));
      expectInvalid(await guarded(`Bearer ${token}x`));
      expectInvalid(await guarded('Bearer abc.def.ghi extra'));
    });
  });

  describe('with stock clients, over a real socket', () => {
    let baseUrl: string;
    beforeAll(async () => {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      baseUrl = await t.app.getUrl();
      baseUrl = baseUrl.replace('[::1]', '127.0.0.1');
    });

    it.each(['header', 'body'] as const)(
      'simple-oauth2 obtains a token by client_credentials (%s client auth) that opens the route',
      async (authorizationMethod) => {
        const oauth = new ClientCredentials({
          client: { id: client.clientId, secret: client.clientSecret },
          auth: { tokenHost: baseUrl, tokenPath: '/oauth/token' },
          options: { authorizationMethod, bodyFormat: 'form' },
        });
        const accessToken = await oauth.getToken({ scope: 'customers:read' });
        expect(accessToken.token.token_type).toBe('Bearer');
        expect(accessToken.expired()).toBe(false);
        const res = await fetch(`${baseUrl}/test/protected`, {
          headers: { authorization: `Bearer ${accessToken.token.access_token as string}` },
        });
        expect(res.status).toBe(200);
      },
    );

    it('simple-oauth2 revokes its token (the JSON answer it insists on), which then opens nothing', async () => {
      const oauth = new ClientCredentials({
        client: { id: client.clientId, secret: client.clientSecret },
        auth: { tokenHost: baseUrl, tokenPath: '/oauth/token', revokePath: '/oauth/revoke' },
        options: { bodyFormat: 'form' },
      });
      const accessToken = await oauth.getToken({ scope: 'customers:read' });
      await accessToken.revoke('access_token');
      const res = await fetch(`${baseUrl}/test/protected`, {
        headers: { authorization: `Bearer ${accessToken.token.access_token as string}` },
      });
      expect(res.status).toBe(401);
    });

    it('simple-oauth2 obtains a token by the password grant', async () => {
      const user = await createUser(t);
      const oauth = new ResourceOwnerPassword({
        client: { id: client.clientId, secret: client.clientSecret },
        auth: { tokenHost: baseUrl, tokenPath: '/oauth/token' },
      });
      const accessToken = await oauth.getToken({
        username: user.username,
        password: user.password,
        scope: ['customers:read'],
      });
      const res = await fetch(`${baseUrl}/test/protected`, {
        headers: { authorization: `Bearer ${accessToken.token.access_token as string}` },
      });
      expect(res.status).toBe(200);
    });

    it('a stock JWT library verifies the token against the published JWKS', async () => {
      const { payload, protectedHeader } = await jwtVerify(
        token,
        createRemoteJWKSet(new URL(`${baseUrl}/.well-known/jwks.json`)),
        { issuer: 'http://localhost:3000', audience: 'api', typ: 'at+jwt' },
      );
      expect(protectedHeader.alg).toBe('EdDSA');
      expect(payload.client_id).toBe(client.clientId);
    });

    it('simple-oauth2 surfaces the RFC 6749 error of a wrong secret', async () => {
      const oauth = new ClientCredentials({
        client: { id: client.clientId, secret: 'wrong' },
        auth: { tokenHost: baseUrl, tokenPath: '/oauth/token' },
      });
      await expect(oauth.getToken({ scope: 'customers:read' })).rejects.toMatchObject({
        output: { statusCode: 401 },
        data: { payload: { error: 'invalid_client' } },
      });
    });
  });
});
