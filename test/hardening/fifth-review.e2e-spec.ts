import { once } from 'node:events';
import { connect } from 'node:net';
import request from 'supertest';
import { createCustomer } from '../factories/customer.factory.js';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';
import { rawRequest } from '../support/raw-http.js';
import { errors, oauthErrors } from '../support/responses.js';

/**
 * What a fifth outside review found (docs/contract.md §2, §4): refusals a stock client could not
 * read or that grew with the caller's keys, a bearer header RFC 6750 allows, and files of the
 * docs' server that are not the docs.
 */
describe('fifth outside review', () => {
  let t: TestApp;
  let write: string;
  let customerId: number;
  beforeAll(async () => {
    t = await startTestApp();
    write = await authHeader(t, ['customers:write', 'customers:read']);
    customerId = (await createCustomer(t, { name: 'A', type: 'plc' })).id;
  });
  afterAll(async () => {
    await t.close();
  });

  const putCompany = (body: string) =>
    request(t.http)
      .put(`/v2/customers/${customerId}/company`)
      .set('authorization', write)
      .set('content-type', 'application/json')
      .send(body);

  describe('a 422 names a caller-chosen field so that any JSON client can read it, briefly', () => {
    it('a field name over 200 characters is cut, with an ellipsis (a 1 MB key was echoed twice)', async () => {
      const key = 'k'.repeat(100_000);
      const res = await putCompany(JSON.stringify({ name: 'Acme', type: 'plc', [key]: 1 }));
      const shown = `${'k'.repeat(199)}…`;
      expect({ status: res.status, body: res.body }).toEqual({
        status: 422,
        body: errors.invalid({ [shown]: [`The ${shown} field is not allowed.`] }),
      });
      expect(res.text.length).toBeLessThan(1000);
    });

    it('a lone surrogate in a field name is shown as U+FFFD (strict JSON parsers refuse it)', async () => {
      const res = await putCompany('{"name":"Acme","type":"plc","\\ud800x":1,"a\\udfff":2}');
      expect({ status: res.status, body: res.body }).toEqual({
        status: 422,
        body: errors.invalid({
          '\uFFFDx': ['The \uFFFDx field is not allowed.'],
          'a\uFFFD': ['The a\uFFFD field is not allowed.'],
        }),
      });
      expect(res.text).not.toMatch(/\\ud[89a-f]/i);
    });

    it('a field name with a surrogate pair (an emoji) is shown as sent', async () => {
      const res = await putCompany('{"name":"Acme","type":"plc","🙂":1}');
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual({ '🙂': ['The 🙂 field is not allowed.'] });
    });
  });

  it('accepts several spaces between Bearer and the token (RFC 6750 §2.1: 1*SP)', async () => {
    const token = write.slice('Bearer '.length);
    for (const authorization of [`Bearer  ${token}`, `bearer   ${token}`]) {
      const res = await request(t.http)
        .get(`/v2/customers/${customerId}/company`)
        .set('authorization', authorization);
      expect({ status: res.status, body: res.body }).toEqual({
        status: 200,
        body: { data: { name: 'A', type: 'plc' } },
      });
      // Also where the header is checked before the body (CONTRACT §2): the body is then read,
      // and a malformed one is 400, not the 401 of an ill-formed header.
      const put = await request(t.http)
        .put(`/v2/customers/${customerId}/company`)
        .set('authorization', authorization)
        .set('content-type', 'application/json')
        .send('{"name":');
      expect({ status: put.status, body: put.body }).toEqual({
        status: 400,
        body: errors.malformedJson,
      });
    }
  });

  describe('Expect: 100-continue is answered only when the body is wanted', () => {
    const body = '{"name":"Acme","type":"charity"}';
    const head = (authorization: string) =>
      `PUT /v2/customers/${customerId}/company HTTP/1.1\r\nHost: x\r\n${authorization}` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
      `Expect: 100-continue\r\nConnection: close\r\n\r\n`;

    it('no bearer header: 401 at once, no 100 Continue, and the connection is closed', async () => {
      const res = await rawRequest(t, head(''));
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
        status: 401,
        body: errors.unauthenticated,
      });
      expect(res.headers.connection).toBe('close');
    });

    // The token, the scope and the customer are decided before the body (docs/contract.md §2):
    // a refusal there is the answer, not an invitation to send a body nobody reads.
    it.each([
      ['a well-formed bearer header with a refused token: 401', 'Bearer abc.def.ghi', 'valid', 401],
      ['a token without the scope: 403', 'read-only', 'valid', 403],
      ['an unknown customer: 404', 'write', 'unknown', 404],
    ] as const)('%s at once, no 100 Continue', async (_name, who, customer, status) => {
      const authorization =
        who === 'write'
          ? write
          : who === 'read-only'
            ? await authHeader(t, ['customers:read'])
            : who;
      const id = customer === 'valid' ? customerId : 987654321;
      const res = await rawRequest(
        t,
        head(`Authorization: ${authorization}\r\n`).replace(`/${customerId}/`, `/${id}/`),
      );
      // The first thing written is the final answer (a 100 would come first).
      expect(res.head.startsWith(`HTTP/1.1 ${status} `)).toBe(true);
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
        status,
        body: {
          401: errors.invalidToken,
          403: errors.insufficientScope,
          404: errors.customerNotFound,
        }[status],
      });
      expect(res.headers.connection).toBe('close');
    });

    /** Sends `head`, waits for its first answer, then sends `content`; all the server wrote. */
    async function continued(requestHead: string, content: string) {
      const { port } = (t.http.listening ? t.http : t.http.listen(0)).address() as { port: number };
      const socket = connect(port, '127.0.0.1');
      let data = '';
      socket.on('data', (chunk) => (data += String(chunk)));
      socket.write(requestHead);
      while (!data.includes('\r\n\r\n')) await once(socket, 'data');
      const first = data;
      socket.write(content);
      await once(socket, 'close');
      return { first, final: data.slice(first.length) };
    }

    it('a bearer header: 100 Continue, then the body is read and answered', async () => {
      const { first, final } = await continued(head(`Authorization: ${write}\r\n`), body);
      expect(first).toBe('HTTP/1.1 100 Continue\r\n\r\n');
      expect(final).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(final.endsWith('{"data":{"name":"Acme","type":"charity"}}')).toBe(true);
    });

    it('at /oauth/token, whose credentials are in the body: 100 Continue, then the answer', async () => {
      const form = '{"grant_type":"client_credentials"}';
      const { first, final } = await continued(
        'POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
          `Content-Length: ${form.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
        form,
      );
      expect(first).toBe('HTTP/1.1 100 Continue\r\n\r\n');
      expect(final).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(JSON.parse(final.slice(final.indexOf('\r\n\r\n') + 4))).toEqual(
        // The body was read: its grant_type is taken, the next parameter is named.
        oauthErrors.missingParameter('scope'),
      );
    });

    it('a declared length over 1 MiB: 413 at once, no 100 Continue', async () => {
      const res = await rawRequest(
        t,
        `PUT /v2/customers/${customerId}/company HTTP/1.1\r\nHost: x\r\nAuthorization: ${write}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 2000000\r\n' +
          'Expect: 100-continue\r\nConnection: close\r\n\r\n',
      );
      // The first thing written is the final answer (a 100 would come first).
      expect(res.head.startsWith('HTTP/1.1 413 ')).toBe(true);
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
        status: 413,
        body: errors.tooLarge,
      });
    });

    it('a request with no body: 100 Continue at once, and the connection stays open for the next', async () => {
      // Node closed the connection after an answer sent without the 100, dropping the request
      // pipelined behind it.
      const res = await rawRequest(
        t,
        `GET /v2/customers/${customerId}/company HTTP/1.1\r\nHost: x\r\nAuthorization: ${write}\r\n` +
          'Expect: 100-continue\r\n\r\n' +
          'GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: next\r\nConnection: close\r\n\r\n',
      );
      expect(res.head).toBe('HTTP/1.1 100 Continue');
      const answers = res.body.split(/(?=HTTP\/1\.1 \d{3} )/);
      expect(answers.map((answer) => answer.slice(0, answer.indexOf('\r\n')))).toEqual([
        'HTTP/1.1 200 OK',
        'HTTP/1.1 200 OK',
      ]);
      expect(answers[1]).toContain('\r\nx-request-id: next\r\n');
      expect(answers[1].endsWith('{"status":"ok"}')).toBe(true);
    });

    it('an unknown route: 404 at once, no 100 Continue (its body was invited, then read, first)', async () => {
      const res = await rawRequest(
        t,
        `PUT /v2/nope HTTP/1.1\r\nHost: x\r\nAuthorization: ${write}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
          'Expect: 100-continue\r\n\r\n',
      );
      // The first thing written is the final answer, and the connection closes after it.
      expect(res.head.startsWith('HTTP/1.1 404 ')).toBe(true);
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
        status: 404,
        body: errors.routeNotFound,
      });
      expect(res.headers.connection).toBe('close');
    });
  });

  it('answers requests pipelined before a malformed one first, in order, then the 400', async () => {
    // The 400 was written at once and the connection closed: webhooks stored for the requests
    // before it went unacknowledged, and the answers queued before it were lost.
    const sender = await authHeader(t, ['webhooks:write', 'webhooks:read']);
    const delivery = (id: string) => {
      const body = JSON.stringify(attemptCompleted());
      return (
        `POST /v2/webhooks HTTP/1.1\r\nHost: x\r\nAuthorization: ${sender}\r\nX-Request-Id: ${id}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
      );
    };
    const { port } = (t.http.listening ? t.http : t.http.listen(0)).address() as { port: number };
    const socket = connect(port, '127.0.0.1');
    socket.write(
      delivery('d-1') +
        delivery('d-2') +
        delivery('d-3') +
        'GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: h-4\r\n\r\n' +
        'GARBAGE\r\n\r\n',
    );
    let data = '';
    for await (const chunk of socket) data += String(chunk);
    // Each answer, in the order written, up to the close.
    const answers = data.split(/(?=HTTP\/1\.1 \d{3} )/).map((answer) => ({
      status: answer.slice(0, answer.indexOf('\r\n')),
      id: /\r\nx-request-id: ([^\r]+)/.exec(answer)?.[1],
      body: answer.slice(answer.indexOf('\r\n\r\n') + 4),
    }));
    const stored = {
      status: 'HTTP/1.1 200 OK',
      body: expect.stringContaining('"status":"processed"'),
    };
    expect(answers).toEqual([
      { ...stored, id: 'd-1' },
      { ...stored, id: 'd-2' },
      { ...stored, id: 'd-3' },
      { status: 'HTTP/1.1 200 OK', id: 'h-4', body: '{"status":"ok"}' },
      {
        status: 'HTTP/1.1 400 Bad Request',
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        body: '{"message":"The request is malformed."}',
      },
    ]);
    for (const { body } of answers.slice(0, 3)) {
      const read = await request(t.http)
        .get(`/v2/webhooks/${JSON.parse(body).data.id}`)
        .set('authorization', sender);
      expect(read.status).toBe(200);
    }
  });

  it('answers a client that shuts its sending side after the request (half-close), and keeps what it sent', async () => {
    // Node's HTTP server ended such a connection at the FIN, before the answer was written.
    const { id } = await createCustomer(t, { name: 'A', type: 'plc' });
    const read = await rawRequest(
      t,
      `GET /v2/customers/${id}/company HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${write}\r\n\r\n`,
      { halfClose: true },
    );
    expect({ status: read.status, body: JSON.parse(read.body) }).toEqual({
      status: 200,
      body: { data: { name: 'A', type: 'plc' } },
    });

    const body = JSON.stringify({ name: 'Half-closed' });
    const put = await rawRequest(
      t,
      `PUT /v2/customers/${id}/company HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${write}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      { halfClose: true },
    );
    expect({ status: put.status, body: JSON.parse(put.body) }).toEqual({
      status: 200,
      body: { data: { name: 'Half-closed', type: 'plc' } },
    });
    await request(t.http)
      .get(`/v2/customers/${id}/company`)
      .set('authorization', write)
      .expect(200, { data: { name: 'Half-closed', type: 'plc' } });
  });

  it("serves only the Swagger UI page's files under /docs, not the rest of its package", async () => {
    for (const path of [
      '/docs',
      '/docs/openapi.json',
      '/docs/openapi.yaml',
      '/docs/swagger-ui-init.js',
      '/docs/swagger-ui.css',
      '/docs/swagger-ui-bundle.js',
      '/docs/swagger-ui-standalone-preset.js',
      '/docs/favicon-32x32.png',
      '/docs/favicon-16x16.png',
    ]) {
      expect({ path, status: (await request(t.http).get(path)).status }).toEqual({
        path,
        status: 200,
      });
    }
    // Its package.json, README, source maps, and a sample page pointing at another server.
    for (const path of [
      '/docs/package.json',
      '/docs/README.md',
      '/docs/index.js',
      '/docs/swagger-ui-bundle.js.map',
      '/docs/swagger-initializer.js',
      '/docs/package.json?x=1',
      // The Swagger module's copy of the page, whose links miss from there, and what they ask for.
      '/docs/index.html',
      '/docs/docs/swagger-ui-init.js',
    ]) {
      const res = await request(t.http).get(path);
      expect({ path, status: res.status, body: res.body }).toEqual({
        path,
        status: 404,
        body: errors.routeNotFound,
      });
    }
  });
});
