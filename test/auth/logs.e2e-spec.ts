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

  it('redacts secret query parameters in any encoding or array form', async () => {
    const client = await createClient(t, { scopes: ['customers:read'] });
    const token: string = (
      await tokenRequest(t, client, {
        grant_type: 'client_credentials',
        scope: 'customers:read',
      }).expect(200)
    ).body.access_token;
    const signature = token.split('.')[2];
    const queries = [
      `access%5Ftoken=${token}`,
      `access%5ftoken=${token}`,
      `access%255Ftoken=${token}`,
      `access_token[]=${token}`,
      `access_token%5B%5D=${token}`,
      `x[access_token]=${token}`,
      `ACCESS_TOKEN=${token}`,
      `a=1&access_token=${token}&b=2`,
      `client%5Fsecret=${client.clientSecret}`,
      `client_secret[0]=${client.clientSecret}`,
      `%70assword=${client.clientSecret}`,
      `token=${encodeURIComponent(token)}`,
    ];
    const start = logs.length;
    for (const query of queries) {
      await request(t.http).get(`/test/protected?${query}`).expect(401);
    }
    // The requests were logged, and neither the token (its signature alone) nor the secret was.
    // A request's line is written once its answer is sent: wait for the last one.
    const logged = () =>
      logs.slice(start).match(/"url":"\/test\/protected\?[^"]*\[redacted\]/g)?.length ?? 0;
    for (let polls = 0; logged() < queries.length && polls < 100; polls++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(logged()).toBe(queries.length);
    expect({ token: logs.includes(signature), secret: logs.includes(client.clientSecret) }).toEqual(
      { token: false, secret: false },
    );
    expect(logs).toContain('"url":"/test/protected?access%5Ftoken=[redacted]"');
    expect(logs).toContain('"url":"/test/protected?a=1&access_token=[redacted]&b=2"');
  });
});
