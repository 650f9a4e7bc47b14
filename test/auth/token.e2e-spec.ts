import { jest } from '@jest/globals';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { OAuthClient } from '../../src/auth/oauth-client.entity.js';
import { ClientSecretHasher } from '../../src/auth/secret-hash.js';
import { Database } from '../../src/database/index.js';
import request from 'supertest';
import {
  basicAuth,
  createClient,
  createUser,
  TestClient,
  TestUser,
  tokenRequest,
} from '../factories/client.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { noStore, oauthErrors } from '../support/responses.js';
import { UNTHROTTLED } from './limits.js';

/** POST /oauth/token: docs/contract.md §3, every success and error row. */
describe('POST /oauth/token', () => {
  let t: TestApp;
  let client: TestClient;
  let user: TestUser;
  beforeAll(async () => {
    t = await startTestApp({ env: UNTHROTTLED });
    client = await createClient(t, { scopes: ['customers:read', 'webhooks:write'] });
    user = await createUser(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const expectNoStore = (res: request.Response) => {
    expect(res.headers['cache-control']).toBe(noStore['cache-control']);
    expect(res.headers.pragma).toBe(noStore.pragma);
  };

  const expectError = (res: request.Response, status: number, body: object) => {
    expect({ status: res.status, body: res.body }).toEqual({ status, body });
    expectNoStore(res);
  };

  describe('issues a token', () => {
    it('for client_credentials with a JSON body: exactly token_type, expires_in (a string), access_token', async () => {
      const res = await tokenRequest(t, client, {
        grant_type: 'client_credentials',
        scope: 'customers:read',
      })
        .set('accept', 'application/json')
        .expect(200);
      expect(Object.keys(res.body)).toEqual(['token_type', 'expires_in', 'access_token']);
      expect(res.body.token_type).toBe('Bearer');
      expect(res.body.expires_in).toBe('31536000');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expectNoStore(res);
      // The token endpoint is not wrapped in the {data} envelope (docs/contract.md §3: exactly those keys).
      expect(res.body.data).toBeUndefined();
    });

    it('as an RFC 9068 JWT: typ at+jwt, kid, EdDSA, and the contract claims', async () => {
      const before = Math.floor(Date.now() / 1000);
      const res = await tokenRequest(t, client, {
        grant_type: 'client_credentials',
        scope: 'webhooks:write customers:read',
      }).expect(200);
      const header = decodeProtectedHeader(res.body.access_token);
      expect(header).toEqual({ alg: 'EdDSA', typ: 'at+jwt', kid: expect.any(String) });
      const jwks = await request(t.http).get('/.well-known/jwks.json').expect(200);
      expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toContain(header.kid);

      const claims = decodeJwt(res.body.access_token);
      expect(Object.keys(claims).sort()).toEqual(
        ['aud', 'client_id', 'exp', 'iat', 'iss', 'jti', 'scope', 'sub'].sort(),
      );
      expect(claims).toMatchObject({
        iss: 'http://localhost:3000',
        aud: 'api',
        sub: client.clientId,
        client_id: client.clientId,
        scope: 'webhooks:write customers:read',
      });
      expect(claims.jti).toMatch(/^[0-9a-f-]{36}$/);
      expect(claims.iat).toBeGreaterThanOrEqual(before);
      expect(claims.exp! - claims.iat!).toBe(31536000);
    });

    it('with a form body and HTTP Basic client authentication (client_secret_basic)', async () => {
      const res = await request(t.http)
        .post('/oauth/token')
        .set('authorization', basicAuth(client.clientId, client.clientSecret))
        .type('form')
        .send('grant_type=client_credentials&scope=customers%3Aread')
        .expect(200);
      expect(decodeJwt(res.body.access_token).client_id).toBe(client.clientId);
      expectNoStore(res);
    });

    it('with a form body carrying the client credentials (client_secret_post)', async () => {
      await request(t.http)
        .post('/oauth/token')
        .type('form')
        .send({
          grant_type: 'client_credentials',
          client_id: client.clientId,
          client_secret: client.clientSecret,
          scope: 'customers:read',
        })
        .expect(200);
    });

    it('with HTTP Basic and the same client_id repeated in the body', async () => {
      await request(t.http)
        .post('/oauth/token')
        .set('authorization', basicAuth(client.clientId, client.clientSecret))
        .send({
          grant_type: 'client_credentials',
          client_id: client.clientId,
          scope: 'customers:read',
        })
        .expect(200);
    });

    it('for the password grant, with the user as subject', async () => {
      const res = await tokenRequest(t, client, {
        grant_type: 'password',
        username: user.username,
        password: user.password,
        scope: 'customers:read',
      }).expect(200);
      const claims = decodeJwt(res.body.access_token);
      expect(claims.sub).toBe(String(user.id));
      expect(claims.client_id).toBe(client.clientId);
    });

    it('ignores unknown parameters (RFC 6749 §3.2) and a repeated scope name', async () => {
      const res = await tokenRequest(t, client, {
        grant_type: 'client_credentials',
        scope: 'customers:read customers:read',
        audience: 'whatever',
      }).expect(200);
      expect(decodeJwt(res.body.access_token).scope).toBe('customers:read');
    });
  });

  describe('invalid_request (400)', () => {
    it.each([
      ['grant_type', { scope: 'customers:read' }],
      ['scope', { grant_type: 'client_credentials' }],
      ['scope', { grant_type: 'client_credentials', scope: '' }],
      ['username', { grant_type: 'password', scope: 'customers:read', password: 'x' }],
      ['password', { grant_type: 'password', scope: 'customers:read', username: 'x' }],
    ])('a missing %s', async (name, body) => {
      expectError(await tokenRequest(t, client, body), 400, oauthErrors.missingParameter(name));
    });

    it('a repeated parameter in a form body', async () => {
      const res = await request(t.http)
        .post('/oauth/token')
        .type('form')
        .send(
          `grant_type=client_credentials&client_id=${client.clientId}` +
            `&client_secret=${client.clientSecret}&scope=customers%3Aread&scope=webhooks%3Awrite`,
        );
      expectError(res, 400, oauthErrors.repeatedParameter('scope'));
    });

    it('a parameter that is not a string', async () => {
      const res = await tokenRequest(t, client, { grant_type: 'client_credentials', scope: 5 });
      expectError(res, 400, oauthErrors.notAString('scope'));
    });

    it('a JSON array is a parameter that is not a string, not a repeated one', async () => {
      const res = await tokenRequest(t, client, {
        grant_type: 'client_credentials',
        scope: ['customers:read'],
      });
      expectError(res, 400, oauthErrors.notAString('scope'));
    });

    it('a JSON body that is not an object', async () => {
      const res = await request(t.http).post('/oauth/token').send(['grant_type']);
      expectError(res, 400, oauthErrors.bodyNotObject);
    });

    it('malformed JSON', async () => {
      const res = await request(t.http)
        .post('/oauth/token')
        .set('content-type', 'application/json')
        .send('{"grant_type": ');
      expectError(res, 400, oauthErrors.malformedJson);
    });

    it.each([
      ['text/plain', 'grant_type=client_credentials'],
      ['application/xml', '<grant_type/>'],
    ])('a %s body (400, not 415, on the OAuth endpoints)', async (type, body) => {
      const res = await request(t.http).post('/oauth/token').set('content-type', type).send(body);
      expectError(res, 400, oauthErrors.unsupportedBody);
    });

    it('client credentials both in HTTP Basic and in the body', async () => {
      const res = await request(t.http)
        .post('/oauth/token')
        .set('authorization', basicAuth(client.clientId, client.clientSecret))
        .send({
          grant_type: 'client_credentials',
          client_secret: client.clientSecret,
          scope: 'customers:read',
        });
      expectError(res, 400, oauthErrors.credentialsTwice);
    });

    it('a different client_id in the body than in HTTP Basic', async () => {
      const res = await request(t.http)
        .post('/oauth/token')
        .set('authorization', basicAuth(client.clientId, client.clientSecret))
        .send({ grant_type: 'client_credentials', client_id: 'other', scope: 'customers:read' });
      expectError(res, 400, oauthErrors.credentialsTwice);
    });
  });

  describe('ambiguous requests: 400 invalid_request, neither value believed', () => {
    const json = (text: string) =>
      request(t.http).post('/oauth/token').set('content-type', 'application/json').send(text);

    it('a parameter repeated in a JSON body (JSON.parse alone keeps the last)', async () => {
      const res = await json(
        `{"grant_type":"client_credentials","client_id":"${client.clientId}",` +
          `"client_secret":"wrong","client_secret":"${client.clientSecret}",` +
          `"scope":"customers:write","scope":"customers:read"}`,
      );
      expectError(res, 400, oauthErrors.repeatedParameter('client_secret'));
    });

    it.each([
      ['plainly', '"scope":"webhooks:write","scope":"customers:read"'],
      ['once with JSON escapes', '"\\u0073cope":"webhooks:write","scope":"customers:read"'],
      ['with the same value', '"scope":"customers:read","scope":"customers:read"'],
    ])('the scope repeated in a JSON body %s', async (_how, scopes) => {
      const res = await json(
        `{"grant_type":"client_credentials","client_id":"${client.clientId}",` +
          `"client_secret":"${client.clientSecret}",${scopes}}`,
      );
      expectError(res, 400, oauthErrors.repeatedParameter('scope'));
    });

    it('ignores a repeated unknown parameter in a JSON body, as in a form (RFC 6749 §3.1)', async () => {
      const res = await json(
        `{"grant_type":"client_credentials","client_id":"${client.clientId}",` +
          `"client_secret":"${client.clientSecret}","scope":"customers:read",` +
          `"audience":"a","audience":"b","resource":{"x":1,"x":2}}`,
      );
      expect(res.status).toBe(200);
      expect(decodeJwt(res.body.access_token).scope).toBe('customers:read');
    });

    it('ignores a repeated unknown parameter in a form body', async () => {
      await request(t.http)
        .post('/oauth/token')
        .set('authorization', basicAuth(client.clientId, client.clientSecret))
        .type('form')
        .send('grant_type=client_credentials&scope=customers%3Aread&audience=a&audience=b')
        .expect(200);
    });

    describe('two Authorization headers', () => {
      let other: TestClient;
      beforeAll(async () => {
        other = await createClient(t, { scopes: ['customers:read'] });
      });

      it.each([
        [
          'two clients',
          () => [
            basicAuth(other.clientId, other.clientSecret),
            basicAuth(client.clientId, client.clientSecret),
          ],
        ],
        [
          'a good then a wrong secret',
          () => [
            basicAuth(client.clientId, client.clientSecret),
            basicAuth(client.clientId, 'wrong'),
          ],
        ],
        [
          'a wrong then a good secret',
          () => [
            basicAuth(client.clientId, 'wrong'),
            basicAuth(client.clientId, client.clientSecret),
          ],
        ],
        [
          'Basic then Bearer',
          () => [basicAuth(client.clientId, client.clientSecret), 'Bearer abc'],
        ],
        [
          'the same header twice',
          () => [
            basicAuth(client.clientId, client.clientSecret),
            basicAuth(client.clientId, client.clientSecret),
          ],
        ],
      ])('%s', async (_case, headers) => {
        const res = await request(t.http)
          .post('/oauth/token')
          // superagent sends an array value as repeated header lines (its types allow it for Cookie).
          .set('authorization', headers() as unknown as string)
          .type('form')
          .send('grant_type=client_credentials&scope=customers%3Aread');
        expectError(res, 400, oauthErrors.repeatedAuthorization);
        expect(res.headers['www-authenticate']).toBeUndefined();
      });
    });
  });

  it('is the token endpoint by its route, also when its path is percent-encoded (/%6Fauth/token)', async () => {
    const path = '/%6Fauth/token';
    // A form body is read there, and a repeated JSON key refused, as at /oauth/token.
    const form = await request(t.http)
      .post(path)
      .set('authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send('grant_type=client_credentials&scope=customers%3Aread');
    expect(form.status).toBe(200);
    const repeated = await request(t.http)
      .post(path)
      .set('authorization', basicAuth(client.clientId, client.clientSecret))
      .set('content-type', 'application/json')
      .send(
        '{"grant_type":"client_credentials","scope":"customers:read","scope":"customers:write"}',
      );
    expectError(repeated, 400, oauthErrors.repeatedParameter('scope'));
    const large = await request(t.http)
      .post(path)
      .set('authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send(`grant_type=client_credentials&pad=${'x'.repeat(16 * 1024)}`);
    expectError(large, 413, oauthErrors.tooLarge);
  });

  describe('a body over 16 KiB: 413, in the RFC 6749 shape', () => {
    const padding = 'x'.repeat(16 * 1024);

    it('up to 16 KiB is read', async () => {
      const start = 'grant_type=client_credentials&scope=customers%3Aread&pad=';
      const res = await request(t.http)
        .post('/oauth/token')
        .set('authorization', basicAuth(client.clientId, client.clientSecret))
        .type('form')
        .send(`${start}${'x'.repeat(16 * 1024 - start.length)}`);
      expect(res.status).toBe(200);
    });

    it('as a form', async () => {
      const res = await request(t.http)
        .post('/oauth/token')
        .set('authorization', basicAuth(client.clientId, client.clientSecret))
        .type('form')
        .send(`grant_type=client_credentials&scope=customers%3Aread&pad=${padding}`);
      expectError(res, 413, oauthErrors.tooLarge);
    });

    it('as JSON', async () => {
      const res = await tokenRequest(t, client, {
        grant_type: 'client_credentials',
        scope: 'customers:read',
        pad: padding,
      });
      expectError(res, 413, oauthErrors.tooLarge);
    });
  });

  describe('invalid_client (401)', () => {
    it('unknown client, wrong secret and disabled client get one answer, without a challenge when the body was used', async () => {
      const disabled = await createClient(t);
      await request(t.http)
        .post('/oauth/introspect')
        .send({ client_id: disabled.clientId, client_secret: disabled.clientSecret, token: 'x' })
        .expect(200);
      const { ClientsService } = await import('../../src/auth/clients.service.js');
      await t.app.get(ClientsService).disable(disabled.clientId);

      for (const credentials of [
        { clientId: '6c3c1a6e-0000-4000-8000-000000000000', clientSecret: client.clientSecret },
        { clientId: client.clientId, clientSecret: `${client.clientSecret}x` },
        { clientId: 'not a uuid', clientSecret: 'x' },
        disabled,
      ]) {
        const res = await tokenRequest(t, credentials, {
          grant_type: 'client_credentials',
          scope: 'customers:read',
        });
        expectError(res, 401, oauthErrors.invalidClient);
        expect(res.headers['www-authenticate']).toBeUndefined();
      }
    });

    it('no client authentication at all', async () => {
      const res = await request(t.http)
        .post('/oauth/token')
        .send({ grant_type: 'client_credentials', scope: 'customers:read' });
      expectError(res, 401, oauthErrors.invalidClient);
    });

    it('a client_id without its secret', async () => {
      const res = await request(t.http).post('/oauth/token').send({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        scope: 'customers:read',
      });
      expectError(res, 401, oauthErrors.invalidClient);
    });

    it('a wrong secret over HTTP Basic, with WWW-Authenticate: Basic realm="oauth"', async () => {
      const res = await request(t.http)
        .post('/oauth/token')
        .set('authorization', basicAuth(client.clientId, 'wrong'))
        .type('form')
        .send('grant_type=client_credentials&scope=customers%3Aread');
      expectError(res, 401, oauthErrors.invalidClient);
      expect(res.headers['www-authenticate']).toBe('Basic realm="oauth"');
    });

    it.each([
      ['another scheme', 'Bearer abc'],
      ['Basic without a colon', `Basic ${Buffer.from('nocolon').toString('base64')}`],
      ['Basic that is not base64', 'Basic ***'],
    ])('an Authorization header with %s', async (_case, header) => {
      const res = await request(t.http)
        .post('/oauth/token')
        .set('authorization', header)
        .send({ grant_type: 'client_credentials', scope: 'customers:read' });
      expectError(res, 401, oauthErrors.invalidClient);
      expect(res.headers['www-authenticate']).toBe('Basic realm="oauth"');
    });

    it('checks the client before the user: wrong secret and wrong password is invalid_client', async () => {
      const res = await tokenRequest(
        t,
        { clientId: client.clientId, clientSecret: 'wrong' },
        {
          grant_type: 'password',
          username: user.username,
          password: 'wrong',
          scope: 'customers:read',
        },
      );
      expectError(res, 401, oauthErrors.invalidClient);
    });

    it('does the same work for an unknown client as for a wrong secret: one client row, one hash of the same parameters', async () => {
      const hasher = t.app.get(ClientSecretHasher);
      const db = t.app.get(Database);
      const digest = jest.spyOn(hasher, 'digest');
      const hydrate = jest.spyOn(db, 'hydrate');
      /** What refusing these credentials hashed and converted. */
      const work = async (clientId: string) => {
        digest.mockClear();
        hydrate.mockClear();
        const res = await tokenRequest(
          t,
          { clientId, clientSecret: 'wrong-secret' },
          { grant_type: 'client_credentials', scope: 'customers:read' },
        );
        expectError(res, 401, oauthErrors.invalidClient);
        return {
          hashes: digest.mock.calls.map(([salt, secret]) => ({ saltBytes: salt.length, secret })),
          clientRows: hydrate.mock.calls
            .filter(([entity]) => entity === OAuthClient)
            .flatMap(([, rows]) => rows.map((row) => Object.keys(row).sort())),
        };
      };
      try {
        const known = await work(client.clientId);
        const unknown = await work('6c3c1a6e-0000-4000-8000-000000000000');
        expect(known.hashes).toEqual([{ saltBytes: 16, secret: 'wrong-secret' }]);
        expect(unknown).toEqual(known);
        expect(known.clientRows).toHaveLength(1);
      } finally {
        digest.mockRestore();
        hydrate.mockRestore();
      }
    });
  });

  describe('grant and scope errors (400)', () => {
    it('invalid_grant: a wrong password, or an unknown username', async () => {
      for (const credentials of [
        { username: user.username, password: `${user.password}x` },
        { username: 'nobody-here', password: user.password },
      ]) {
        const res = await tokenRequest(t, client, {
          grant_type: 'password',
          scope: 'customers:read',
          ...credentials,
        });
        expectError(res, 400, oauthErrors.invalidGrant);
      }
    });

    it('unauthorized_client: a grant the client is not registered for', async () => {
      const machine = await createClient(t, { grants: ['client_credentials'] });
      const res = await tokenRequest(t, machine, {
        grant_type: 'password',
        username: user.username,
        password: user.password,
        scope: 'customers:read',
      });
      expectError(res, 400, oauthErrors.grantNotAllowed('password'));

      const people = await createClient(t, { grants: ['password'] });
      const cc = await tokenRequest(t, people, {
        grant_type: 'client_credentials',
        scope: 'customers:read',
      });
      expectError(cc, 400, oauthErrors.grantNotAllowed('client_credentials'));
    });

    it.each(['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:jwt-bearer'])(
      'unsupported_grant_type: %s',
      async (grant) => {
        const res = await tokenRequest(t, client, { grant_type: grant, scope: 'customers:read' });
        expectError(res, 400, oauthErrors.unsupportedGrantType);
      },
    );

    it.each([
      ['an unknown scope', 'customers:delete'],
      ['a scope the client may not request', 'customers:write'],
      ['a mix: refused whole, never narrowed', 'customers:read customers:write'],
      ['only spaces', '   '],
    ])('invalid_scope: %s', async (_case, scope) => {
      const res = await tokenRequest(t, client, { grant_type: 'client_credentials', scope });
      expectError(res, 400, oauthErrors.invalidScope);
    });
  });
});
