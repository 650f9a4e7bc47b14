import { once } from 'node:events';
import { connect } from 'node:net';
import request from 'supertest';
import { createCustomer } from '../factories/customer.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { authHeader } from '../support/auth.js';
import { rawRequest } from '../support/raw-http.js';
import { errors, oauthErrors } from '../support/responses.js';

// The bodies as sent, byte for byte.
const methodNotAllowed = JSON.stringify(errors.methodNotAllowed);
const oauthMethodNotAllowed = JSON.stringify(oauthErrors.methodNotAllowed);

/**
 * A path the service has, asked with a method it does not have: 405 with an Allow header naming
 * the methods it has (RFC 9110 §15.5.6), decided from the path alone like a 404, before the token
 * and the body (docs/contract.md §2). An unknown path stays 404 whatever the method.
 */
describe('405 Method Not Allowed (docs/contract.md §2)', () => {
  let t: TestApp;
  let tokens: (string | undefined)[];
  let port: number;
  beforeAll(async () => {
    t = await startTestApp();
    const valid = await authHeader(t, [
      'customers:read',
      'customers:write',
      'webhooks:read',
      'webhooks:write',
    ]);
    // No token, an ill-formed one, a valid one with every scope.
    tokens = [undefined, 'Bearer', valid];
    ({ port } = (t.http.listening ? t.http : t.http.listen(0)).address() as { port: number });
  });
  afterAll(async () => {
    await t.close();
  });

  const send = (method: string, path: string, authorization?: string) => {
    const req = request(t.http)[method.toLowerCase() as 'get'](path).set('x-request-id', 'm-1');
    return authorization ? req.set('authorization', authorization) : req;
  };

  it.each([
    ['DELETE', '/v2/customers/1/company', 'GET, HEAD, PUT', methodNotAllowed],
    ['POST', '/v2/customers/1/company', 'GET, HEAD, PUT', methodNotAllowed],
    ['DELETE', '/v2/customers', 'GET, HEAD, POST', methodNotAllowed],
    ['PUT', '/v2/customers/1', 'GET, HEAD', methodNotAllowed],
    ['PATCH', '/v2/webhooks', 'GET, HEAD, POST', methodNotAllowed],
    // No CORS here: nothing answers OPTIONS (with CORS on, see cors.e2e-spec.ts).
    ['OPTIONS', '/v2/webhooks', 'GET, HEAD, POST', methodNotAllowed],
    ['DELETE', '/v2/webhooks/abc', 'GET, HEAD', methodNotAllowed],
    ['POST', '/health', 'GET, HEAD', methodNotAllowed],
    ['POST', '/.well-known/jwks.json', 'GET, HEAD', methodNotAllowed],
    ['GET', '/oauth/token', 'POST', oauthMethodNotAllowed],
    ['PUT', '/oauth/revoke?token=x', 'POST', oauthMethodNotAllowed],
    ['HEAD', '/oauth/token', 'POST', ''],
  ])('%s %s is 405 with Allow: %s, whatever the token', async (method, path, allow, body) => {
    const oauth = path.startsWith('/oauth/');
    for (const authorization of tokens) {
      const res = await send(method, path, authorization);
      expect({
        authorization,
        status: res.status,
        allow: res.headers.allow,
        type: res.headers['content-type'],
        length: res.headers['content-length'],
        body: res.text ?? '',
        id: res.headers['x-request-id'],
        cacheControl: res.headers['cache-control'],
      }).toEqual({
        authorization,
        status: 405,
        allow,
        type: 'application/json; charset=utf-8',
        length: String(Buffer.byteLength(oauth ? oauthMethodNotAllowed : methodNotAllowed)),
        body,
        id: 'm-1',
        // The OAuth endpoints' answers are never stored (RFC 6749 §5.1), their errors included.
        cacheControl: oauth ? 'no-store' : undefined,
      });
      // The API's security headers, as on every JSON answer.
      expect(res.headers).toMatchObject({
        'content-security-policy': "default-src 'none';frame-ancestors 'none'",
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
      });
      expect(res.headers['www-authenticate']).toBeUndefined();
    }
  });

  it.each([
    ['DELETE', '/v2/nothing-here'],
    ['GET', '/v2/customers/1/address'],
    ['PUT', '/v2/customers/1/company/extra'],
    // An empty id is no route, whatever the method (it matches `:customer_id` with nothing).
    ['DELETE', '/v2/customers/'],
    ['PATCH', '/v2/customers//company'],
    ['POST', '/v2/webhooks/'],
    // The docs keep their 404s: their file server answers GET for any name under /docs/.
    ['DELETE', '/docs'],
    ['POST', '/docs/openapi.json'],
    ['PUT', '/docs/swagger-ui.css'],
    ['DELETE', '/docs/no-such-file.js'],
    ['OPTIONS', '/nothing'],
  ])('%s %s (no such route) stays 404 whatever the token', async (method, path) => {
    for (const authorization of tokens) {
      const res = await send(method, path, authorization);
      expect({
        authorization,
        status: res.status,
        allow: res.headers.allow,
        body: res.body,
      }).toEqual({ authorization, status: 404, allow: undefined, body: errors.routeNotFound });
    }
  });

  it("leaves the routes' own methods as they were", async () => {
    const customer = await createCustomer(t, { name: 'Acme Ltd', type: 'limited-company' });
    const company = `/v2/customers/${customer.id}/company`;
    const valid = tokens[2]!;
    const answers = [
      await send('GET', company, valid),
      await send('HEAD', company, valid),
      await send('PUT', company, valid).send({ name: 'Acme Two Ltd' }),
      await send('GET', company),
      await send('PUT', company).send({ name: 'x' }),
      await send('GET', '/health'),
      await send('HEAD', '/health'),
      await send('GET', '/docs/openapi.json'),
      await send('HEAD', '/docs'),
      await send('POST', '/oauth/token').type('form').send('grant_type=client_credentials'),
    ];
    expect(answers.map((res) => [res.status, res.headers.allow])).toEqual([
      [200, undefined],
      [200, undefined],
      [200, undefined],
      [401, undefined],
      [401, undefined],
      [200, undefined],
      [200, undefined],
      [200, undefined],
      [200, undefined],
      // No client credentials: invalid_request.
      [400, undefined],
    ]);
    expect(answers[2].body).toEqual({ data: { name: 'Acme Two Ltd', type: 'limited-company' } });
  });

  /**
   * Writes `head` (and the start of a body), waits for the whole answer, then sends the rest of
   * the body, 1 MiB, as a client that uploads without reading does, and ends: the answer came
   * before the body, and the connection is closed without a reset.
   */
  async function answeredBeforeBody(head: string, more: (chunk: Buffer) => Buffer | string) {
    const socket = connect(port, '127.0.0.1');
    const failures: string[] = [];
    socket.on('error', (error: NodeJS.ErrnoException) => failures.push(error.code ?? ''));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    const closed = once(socket, 'close');
    socket.write(head);
    const complete = () => {
      const end = answer.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(answer);
      return end !== -1 && length !== null && answer.length >= end + 4 + Number(length[1]);
    };
    while (!complete()) await once(socket, 'data');
    const sentBefore = answer;
    const chunk = Buffer.alloc(64 * 1024, 'a');
    for (let i = 0; i < 16; i++) {
      if (!socket.write(more(chunk))) await once(socket, 'drain');
    }
    socket.end();
    const [hadError] = (await closed) as [boolean];
    return { answer: sentBefore, after: answer.slice(sentBefore.length), failures, hadError };
  }

  it.each([
    ['a declared length', 'Content-Length: 5000000\r\n\r\n{"name":"', (chunk: Buffer) => chunk],
    [
      'chunks',
      'Transfer-Encoding: chunked\r\n\r\n9\r\n{"name":"\r\n',
      (chunk: Buffer) => `${chunk.length.toString(16)}\r\n${chunk.toString()}\r\n`,
    ],
  ] as const)(
    'answers a body sent with %s before reading it, and closes the connection gently',
    async (_name, rest, more) => {
      const res = await answeredBeforeBody(
        'DELETE /v2/customers/1/company HTTP/1.1\r\nHost: x\r\nX-Request-Id: m-2\r\n' +
          `Content-Type: application/json\r\n${rest}`,
        more,
      );
      const [head, body] = res.answer.split('\r\n\r\n');
      expect({
        status: head.split('\r\n')[0],
        allow: /\r\nallow: (.*)/.exec(head)?.[1],
        connection: /\r\nconnection: (.*)/i.exec(head)?.[1],
        id: /\r\nx-request-id: (.*)/.exec(head)?.[1],
        body,
        after: res.after,
        failures: res.failures,
        hadError: res.hadError,
      }).toEqual({
        status: 'HTTP/1.1 405 Method Not Allowed',
        allow: 'GET, HEAD, PUT',
        connection: 'close',
        id: 'm-2',
        body: methodNotAllowed,
        after: '',
        failures: [],
        hadError: false,
      });
    },
  );

  it('answers a body announced with Expect: 100-continue at once, never inviting it', async () => {
    const res = await answeredBeforeBody(
      'PATCH /v2/webhooks HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n' +
        'Content-Type: application/json\r\nContent-Length: 1048576\r\n\r\n',
      (chunk) => chunk,
    );
    expect({
      status: res.answer.split('\r\n')[0],
      allow: /\r\nallow: (.*)/.exec(res.answer)?.[1],
      body: res.answer.split('\r\n\r\n')[1],
      failures: res.failures,
      hadError: res.hadError,
    }).toEqual({
      status: 'HTTP/1.1 405 Method Not Allowed',
      allow: 'GET, HEAD, POST',
      body: methodNotAllowed,
      failures: [],
      hadError: false,
    });
  });

  it('keeps the connection of a wrong method without a body: the requests behind it are answered', async () => {
    const res = await rawRequest(
      t,
      'POST /health HTTP/1.1\r\nHost: x\r\n\r\n' +
        'GET /oauth/token HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n' +
        'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    const statuses = `${res.head}\r\n\r\n${res.body}`.match(/HTTP\/1\.1 \d+ [A-Za-z ]+/g);
    expect(statuses).toEqual([
      'HTTP/1.1 405 Method Not Allowed',
      // A request that asks for 100 Continue but has no body is told at once (CONTRACT §2).
      'HTTP/1.1 100 Continue',
      'HTTP/1.1 405 Method Not Allowed',
      'HTTP/1.1 200 OK',
    ]);
  });
});
