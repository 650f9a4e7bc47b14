import { Writable } from 'node:stream';
import { Controller, Get, Logger, Module } from '@nestjs/common';
import request from 'supertest';
import { QueryFailedError } from 'typeorm';
import { ServiceUnavailableApiException } from '../../src/common/exceptions/api.exception.js';
import { CompletedAttempt } from '../../src/learning/completed-attempt.entity.js';
import { useLogStream } from '../../src/config/logger.config.js';
import { basicAuth, createClient, createUser, tokenRequest } from '../factories/client.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { rawRequest } from '../support/raw-http.js';
import { UNTHROTTLED } from './limits.js';
import { ProtectedModule } from './protected.module.js';

/** Test-only routes that fail: one as the service shedding load does, one as a bug does. */
@Controller('test/failing')
class FailingController {
  @Get('busy')
  busy() {
    throw new ServiceUnavailableApiException('Busy; try again shortly.');
  }

  @Get('broken')
  broken() {
    throw new Error('a bug');
  }
}

@Module({ controllers: [FailingController] })
class FailingModule {}

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
      imports: [ProtectedModule, FailingModule],
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
    expect(logs).toContain('"url":"/test/protected?*"');
    // One line a request, its level by status: info for 2xx, warn for 4xx.
    const requestLines = logs
      .split('\n')
      .filter((line) => line.includes('"msg":"request completed"'))
      .map((line) => JSON.parse(line));
    const refused = requestLines.find(
      (line) => line.req.url === '/test/protected?*' && line.res.statusCode === 401,
    );
    expect(refused).toMatchObject({ level: 40, res: { statusCode: 401 } });
    expect(refused.req).toEqual({
      id: expect.any(String),
      method: 'GET',
      url: '/test/protected?*',
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

  /** A client allowed customers:read, and a token it was issued. */
  async function clientWithToken() {
    const client = await createClient(t, { scopes: ['customers:read'] });
    const { body } = await tokenRequest(t, client, {
      grant_type: 'client_credentials',
      scope: 'customers:read',
    }).expect(200);
    return { client, token: (body as { access_token: string }).access_token };
  }

  it('redacts secret query parameters in any encoding or array form', async () => {
    const { client, token } = await clientWithToken();
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
    for (const [i, query] of queries.entries()) {
      await request(t.http)
        .get(`/test/protected?${query}`)
        .set('x-request-id', `query-${i}`)
        .expect(401);
    }
    const lines = await requestLines(queries.map((_, i) => `query-${i}`));
    expect(lines.map((line) => line.req.url)).toEqual(queries.map(() => '/test/protected?*'));
    expect({ token: logs.includes(signature), secret: logs.includes(client.clientSecret) }).toEqual(
      { token: false, secret: false },
    );
  });

  it('logs no part of a URL that could hold a token, wherever and however it is sent', async () => {
    const { token } = await clientWithToken();
    const [header, payload, signature] = token.split('.');
    const everyByte = (text: string) =>
      [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
    const bearer = `Bearer ${token}`;
    // [method, URL sent, URL logged, status] (the token is also the request's valid credential)
    const cases: [string, string, string, number][] = [
      ['GET', `/v2/customers/1/company?redirect=${token}`, '/v2/customers/1/company?*', 404],
      ['GET', `/v2/customers/1/company?access_token%00=${token}`, '/v2/customers/1/company?*', 404],
      ['POST', `/oauth/token?assertion=${token}`, '/oauth/token?*', 401],
      ['GET', `/nothing/${token}`, '/*/*', 404],
      ['GET', `/test/protected?Bearer%20${token}`, '/test/protected?*', 200],
      ['GET', `/test/protected?Authorization=Bearer+${token}`, '/test/protected?*', 200],
      ['GET', `/test/protected?${token}`, '/test/protected?*', 200],
      ['GET', `/v2/customers/${token}/company`, '/v2/customers/*/company', 404],
      ['GET', `/test/${everyByte(token)}`, '/test/*', 404],
      ['GET', `/test/${token.replaceAll('.', '%2E')}`, '/test/*', 404],
      ['GET', `/test/${token.replaceAll('.', '%252e')}`, '/test/*', 404],
      ['GET', `/test/${everyByte(bearer)}`, '/test/*', 404],
      ['GET', `/${header}/${payload}/${signature}`, '/*/*/*', 404],
      ['GET', `/v2/customers/1/company/${signature}?x=1`, '/v2/customers/*/company/*?*', 404],
      ['GET', `/v2/%63ustomers/1/company`, '/v2/customers/1/company', 404],
    ];
    const statuses: number[] = [];
    for (const [i, [method, url]] of cases.entries()) {
      const sent =
        method === 'POST'
          ? request(t.http).post(url).type('form').send('grant_type=x')
          : request(t.http).get(url);
      statuses.push(
        (await sent.set('authorization', bearer).set('x-request-id', `path-${i}`)).status,
      );
    }
    expect(statuses).toEqual(cases.map(([, , , status]) => status));
    const lines = await requestLines(cases.map((_, i) => `path-${i}`));
    expect(lines.map((line) => line.req.url)).toEqual(cases.map(([, , logged]) => logged));
    const leaked = { header, payload, signature, bearer: /Bearer/i.test(logs) };
    expect(
      Object.entries(leaked)
        .filter(
          ([, value]) => value === true || (typeof value === 'string' && logs.includes(value)),
        )
        .map(([name]) => name),
    ).toEqual([]);
  });

  it('logs the answers of the HTTP layer itself, with their request id and no URL', async () => {
    const secret = `eyJ${'a'.repeat(20)}.eyJ${'b'.repeat(20)}.${'c'.repeat(30)}`;
    const tooLong = await request(t.http).get(`/health?x=${secret}&y=${'a'.repeat(9000)}`);
    const malformed = await request(t.http).get(`/v2/customers/%ff${secret}/company`);
    const noHost = await rawRequest(
      t,
      `GET /health?${secret} HTTP/1.1\r\nConnection: close\r\n\r\n`,
    );
    const parserRefused = await rawRequest(
      t,
      `GET /health?${secret} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`,
    );
    const answers = [
      [tooLong.status, tooLong.headers['x-request-id']],
      [malformed.status, malformed.headers['x-request-id']],
      [noHost.status, noHost.headers['x-request-id']],
      [parserRefused.status, parserRefused.headers['x-request-id']],
    ];
    expect(answers.map(([status]) => status)).toEqual([414, 400, 400, 431]);
    const lines = await requestLines(answers.map(([, id]) => String(id)));
    expect(lines.map(({ level, req, res }) => ({ level, req, res }))).toEqual([
      { level: 40, req: expect.objectContaining({ url: '/health?*' }), res: { statusCode: 414 } },
      {
        level: 40,
        req: expect.objectContaining({ url: '/v2/customers/*/company' }),
        res: { statusCode: 400 },
      },
      { level: 40, req: expect.objectContaining({ url: '/health?*' }), res: { statusCode: 400 } },
      {
        level: 40,
        req: { id: answers[3][1], remoteAddress: expect.any(String) },
        res: { statusCode: 431 },
      },
    ]);
    expect(logs).not.toContain(secret.slice(0, 20));
  });

  it('logs a 503 at warn (load shed, a database away: try again) and any other 5xx at error', async () => {
    const busy = await request(t.http).get('/test/failing/busy').expect(503);
    const broken = await request(t.http).get('/test/failing/broken').expect(500);
    expect(broken.body).toEqual({ message: 'Internal server error.' });
    const lines = await requestLines([busy, broken].map((r) => String(r.headers['x-request-id'])));
    expect(lines.map(({ level, res }) => ({ level, res }))).toEqual([
      { level: 40, res: { statusCode: 503 } },
      { level: 50, res: { statusCode: 500 } },
    ]);
  });

  it('logs a database error without the values it was given, which come from request bodies', async () => {
    // As a handler's failure is logged (WebhookProcessor): a duplicate key, whose statement's
    // parameters and (on PostgreSQL) `detail` hold the payload's values.
    const value = 'payload-value-0123456789';
    const attempts = t.db.getRepository(CompletedAttempt);
    const row = { clientId: value, attemptId: 1, userId: 2, moduleId: 3, recordedAt: new Date() };
    await attempts.insert(row);
    const error = await attempts.insert(row).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(QueryFailedError);
    expect((error as QueryFailedError).parameters).toContain(value);
    new Logger('LogTest').error({ err: error }, 'a statement failed');
    for (let polls = 0; !logs.includes('a statement failed') && polls < 100; polls++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const line = JSON.parse(logs.split('\n').find((l) => l.includes('a statement failed'))!);
    expect(line.err).toMatchObject({ type: 'QueryFailedError', query: expect.any(String) });
    expect(logs).not.toContain(value);
  });

  /** The request line of each id, in order, once all are written (after each answer is sent). */
  async function requestLines(ids: string[]) {
    const find = () => {
      const lines = logs
        .split('\n')
        .filter((line) => line.includes('"msg":"request completed"'))
        .map((line) => JSON.parse(line));
      return ids.map((id) => lines.find((line) => line.req.id === id));
    };
    for (let polls = 0; find().includes(undefined) && polls < 100; polls++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return find();
  }
});
