import { Writable } from 'node:stream';
import request from 'supertest';
import { useLogStream } from '../../src/config/logger.config.js';
import { basicAuth, createClient, createUser, tokenRequest } from '../factories/client.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { UNTHROTTLED } from './limits.js';
import { ProtectedModule } from './protected.module.js';

/** docs/contract.md §8: tokens, secrets and passwords never appear in logs, even at the finest level. */
describe('secrets stay out of the logs', () => {
  let t: TestApp;
  let logs = '';
  beforeAll(async () => {
    useLogStream(
      new Writable({
        write(chunk, _encoding, done) {
          logs += String(chunk);
          done();
        },
      }),
    );
    t = await startTestApp({
      env: { ...UNTHROTTLED, LOG_LEVEL: 'trace' },
      imports: [ProtectedModule],
    });
  });
  afterAll(async () => {
    await t.close();
    useLogStream(undefined);
  });

  it('through a full token flow, successes and failures alike', async () => {
    const client = await createClient(t, { scopes: ['customers:read'] });
    const user = await createUser(t);
    const wrongSecret = 'wrong-secret-0123456789';
    const wrongPassword = 'wrong-password-0123456789';
    const cc = { grant_type: 'client_credentials', scope: 'customers:read' };

    const issued = await tokenRequest(t, client, cc).expect(200);
    const basic = await request(t.http)
      .post('/oauth/token')
      .set('authorization', basicAuth(client.clientId, client.clientSecret))
      .type('form')
      .send(cc)
      .expect(200);
    const password = await tokenRequest(t, client, {
      grant_type: 'password',
      scope: 'customers:read',
      username: user.username,
      password: user.password,
    }).expect(200);
    await tokenRequest(t, { clientId: client.clientId, clientSecret: wrongSecret }, cc).expect(401);
    await tokenRequest(t, client, {
      grant_type: 'password',
      scope: 'customers:read',
      username: user.username,
      password: wrongPassword,
    }).expect(400);

    const tokens: string[] = [issued, basic, password].map((r) => r.body.access_token);
    for (const token of tokens) {
      await request(t.http)
        .get('/test/protected')
        .set('authorization', `Bearer ${token}`)
        .expect(200);
    }
    await request(t.http).get(`/test/protected?access_token=${tokens[0]}`).expect(401);
    await request(t.http)
      .post('/oauth/introspect')
      .send({ token: tokens[1], client_id: client.clientId, client_secret: client.clientSecret })
      .expect(200);
    await request(t.http)
      .post('/oauth/revoke')
      .type('form')
      .send({ token: tokens[2], client_id: client.clientId, client_secret: client.clientSecret })
      .expect(200);
    await request(t.http)
      .get('/test/protected')
      .set('authorization', `Bearer ${tokens[2]}`)
      .expect(401);

    // The flow was logged (one line a request at least), yet nothing secret was.
    expect(logs.match(/"url":"\/oauth\/token"/g)?.length).toBeGreaterThanOrEqual(5);
    expect(logs).toContain('"url":"/test/protected?access_token=[redacted]"');
    // One line a request, its level by status: info for 2xx, warn for 4xx.
    const requestLines = logs
      .split('\n')
      .filter((line) => line.includes('"msg":"request completed"'))
      .map((line) => JSON.parse(line));
    const refused = requestLines.find(
      (line) => line.req.url === '/test/protected?access_token=[redacted]',
    );
    expect(refused).toMatchObject({ level: 40, res: { statusCode: 401 } });
    expect(refused.req).toEqual({
      id: expect.any(String),
      method: 'GET',
      url: '/test/protected?access_token=[redacted]',
      remoteAddress: expect.any(String),
    });
    expect(requestLines.find((line) => line.req.url === '/test/protected')).toMatchObject({
      level: 30,
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
    });
    const secrets = {
      clientSecret: client.clientSecret,
      wrongSecret,
      password: user.password,
      wrongPassword,
      basicCredentials: basicAuth(client.clientId, client.clientSecret).slice('Basic '.length),
      ...Object.fromEntries(tokens.map((token, i) => [`token${i}`, token])),
      // A token's signature alone would do to recognise it.
      ...Object.fromEntries(tokens.map((token, i) => [`signature${i}`, token.split('.')[2]])),
    };
    const leaked = Object.entries(secrets)
      .filter(([, secret]) => logs.includes(secret))
      .map(([name]) => name);
    expect(leaked).toEqual([]);
  });
});
