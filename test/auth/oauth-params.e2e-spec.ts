import request from 'supertest';
import { createClient, TestClient, tokenRequest } from '../factories/client.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { freePort } from '../support/processes.js';
import { noStore, oauthErrors } from '../support/responses.js';
import { UNTHROTTLED } from './limits.js';

/**
 * The /oauth endpoints' parameters, validated by their DTOs through the global pipe
 * (@OAuthParameters()): which problem a request with several is refused for, and that refusals
 * before the handler are counted like the others.
 */
describe('OAuth request parameters', () => {
  let t: TestApp;
  let client: TestClient;
  let metricsUrl: string;
  beforeAll(async () => {
    const port = await freePort();
    t = await startTestApp({
      env: { ...UNTHROTTLED, METRICS_PORT: String(port), HOST: '127.0.0.1' },
    });
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    client = await createClient(t, { scopes: ['customers:read'] });
  });
  afterAll(async () => {
    await t.close();
  });

  const expectError = (res: request.Response, body: object) => {
    expect({ status: res.status, body: res.body }).toEqual({ status: 400, body });
    expect(res.headers['cache-control']).toBe(noStore['cache-control']);
  };

  it('names a parameter sent wrongly before one left out', async () => {
    const res = await tokenRequest(t, client, { scope: 7 });
    expectError(res, oauthErrors.notAString('scope'));
  });

  it('names the first missing parameter in the order the DTO declares them', async () => {
    const res = await tokenRequest(t, client, { grant_type: 'password' });
    expectError(res, oauthErrors.missingParameter('scope'));
  });

  it('refuses a username that is not a string also for the client_credentials grant', async () => {
    const res = await tokenRequest(t, client, {
      grant_type: 'client_credentials',
      scope: 'customers:read',
      username: ['a'],
    });
    expectError(res, oauthErrors.notAString('username'));
    const object = await tokenRequest(t, client, {
      grant_type: 'client_credentials',
      scope: 'customers:read',
      username: { a: 1 },
    });
    expectError(object, oauthErrors.notAString('username'));
  });

  it('reads a JSON null body as no parameters', async () => {
    const res = await request(t.http)
      .post('/oauth/token')
      .set('content-type', 'application/json')
      .send('null');
    expectError(res, oauthErrors.missingParameter('grant_type'));
  });

  it('ignores unknown parameters named like Object.prototype members', async () => {
    await request(t.http)
      .post('/oauth/introspect')
      .send({
        token: 'x',
        client_id: client.clientId,
        client_secret: client.clientSecret,
        toString: 'a',
        hasOwnProperty: 1,
      })
      .expect(200, { active: false });
  });

  it('counts a refusal by the parameters’ validation under the grant type sent', async () => {
    const refused = async (grant: string) => {
      const text = await (await fetch(metricsUrl)).text();
      const sample = new RegExp(
        `^oauth_tokens_refused_total\\{grant_type="${grant}",error="invalid_request"\\} (\\d+)$`,
        'm',
      ).exec(text);
      return Number(sample?.[1] ?? 0);
    };
    const before = { named: await refused('client_credentials'), none: await refused('none') };
    await tokenRequest(t, client, { grant_type: 'client_credentials' }).expect(400);
    await tokenRequest(t, client, { scope: 'customers:read' }).expect(400);
    expect(await refused('client_credentials')).toBe(before.named + 1);
    expect(await refused('none')).toBe(before.none + 1);
  });
});
