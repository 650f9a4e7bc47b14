import { jest } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import request from 'supertest';
import { processMemory as memory } from '../../src/common/memory-budget.js';
import { WebhookProcessor } from '../../src/webhooks/webhook-processor.js';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { authHeader, senderHeaders } from '../support/auth.js';
import { capturedLogs } from '../support/log-audit.js';
import { rawRequest } from '../support/raw-http.js';
import { errors, oauthErrors } from '../support/responses.js';
import { until } from '../support/until.js';

/**
 * Large request bodies (64 KiB up to the 1 MiB limit) take room in the process's memory budget
 * once they have arrived and before they are parsed, 24 bytes for each of their bytes (what
 * JSON.parse may make of them), and give it back once their answer is made (a body whose client
 * left while it waited is dropped unparsed): many at once wait in turn instead of exhausting the
 * heap.
 */
describe('large request bodies and the memory budget', () => {
  let t: TestApp;
  let write: string;
  let read: string;
  let port: number;
  beforeAll(async () => {
    t = await startTestApp({ env: { LOG_LEVEL: 'info' } });
    ({ write, read } = await senderHeaders(t));
    if (!t.http.listening) await new Promise<void>((done) => t.http.listen(0, '127.0.0.1', done));
    port = (t.http.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t.close();
  });

  /** The request lines logged since `from` (an offset in capturedLogs()). */
  const requestLinesSince = (from: number) =>
    capturedLogs()
      .slice(from)
      .split('\n')
      .filter((line) => line.includes('"msg":"request completed"'))
      .map((line) => JSON.parse(line));

  const send = (body: object) =>
    request(t.http).post('/v2/webhooks').set('authorization', write).send(body);
  const large = () => attemptCompleted({ filler: 'x'.repeat(200_000) } as object);

  it('counts a large body at 24 bytes a byte while it is handled, and gives it back', async () => {
    const acquire = jest.spyOn(memory, 'acquire');
    try {
      const body = large();
      await send(body).expect(200);
      expect(acquire.mock.calls.map(([bytes]) => bytes)).toEqual([
        24 * Buffer.byteLength(JSON.stringify(body)),
      ]);
      await until(() => memory.held === 0, 15_000);
      // A small body is not counted.
      await send(attemptCompleted()).expect(200);
      expect(acquire).toHaveBeenCalledTimes(1);
    } finally {
      acquire.mockRestore();
    }
  });

  it('answers 503 with Retry-After a large body that found no room in time; small ones pass meanwhile', async () => {
    const hold = await memory.acquire(memory.limit);
    try {
      const refused = send(large());
      // An OAuth endpoint reads no body large enough to wait: over 16 KiB is 413 at once.
      const oauth = await request(t.http)
        .post('/oauth/token')
        .send({ grant_type: 'client_credentials', filler: 'x'.repeat(200_000) });
      expect({ status: oauth.status, body: oauth.body }).toEqual({
        status: 413,
        body: oauthErrors.tooLarge,
      });
      // Small bodies are not held up by the wait.
      await send(attemptCompleted()).expect(200);
      // The token is checked before the body (CONTRACT §2): a missing one is 401 at once.
      const anonymous = await request(t.http).post('/v2/webhooks').send(large());
      expect({ status: anonymous.status, body: anonymous.body }).toEqual({
        status: 401,
        body: errors.unauthenticated,
      });
      const res = await refused;
      expect({ status: res.status, body: res.body }).toEqual({
        status: 503,
        body: {
          message: 'Too many large requests are being handled right now; try again shortly.',
        },
      });
      expect(res.headers['retry-after']).toBe('1');
      expect(res.headers['x-request-id']).toBeTruthy();
    } finally {
      hold();
    }
    await send(large()).expect(200);
  }, 30_000);

  it('answers a bad token, a missing scope and an unknown customer at once while the budget is full (CONTRACT §2)', async () => {
    const hold = await memory.acquire(memory.limit);
    try {
      const badToken = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', 'Bearer not-a-token-of-ours')
        .send(large());
      expect({ status: badToken.status, body: badToken.body }).toEqual({
        status: 401,
        body: errors.invalidToken,
      });
      const noScope = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', read)
        .send(large());
      expect({ status: noScope.status, body: noScope.body }).toEqual({
        status: 403,
        body: errors.insufficientScope,
      });
      const customers = await authHeader(t, ['customers:write']);
      const unknown = await request(t.http)
        .put('/v2/customers/no-such-customer/company')
        .set('authorization', customers)
        .send({ name: 'x'.repeat(200_000) });
      expect({ status: unknown.status, body: unknown.body }).toEqual({
        status: 404,
        body: errors.customerNotFound,
      });
      // None of them took room or is waiting for it.
      expect(memory.held).toBe(memory.limit);
    } finally {
      hold();
    }
  });

  it('answers at once, budget full, a large body it cannot read: another charset, compressed, not UTF-8', async () => {
    const hold = await memory.acquire(memory.limit);
    try {
      const text = JSON.stringify(large());
      const latin1 = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', write)
        .set('content-type', 'application/json; charset=latin1')
        .send(text);
      const gzip = await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', write)
        .set('content-type', 'application/json')
        .set('content-encoding', 'gzip')
        .send(text);
      const notUtf8 = await postBytes(
        '/v2/webhooks',
        { authorization: write, 'content-type': 'application/json' },
        Buffer.concat([Buffer.from(text.slice(0, -2)), Buffer.from([0xff, 0x7d, 0x7d])]),
      );
      expect(
        [latin1, gzip, notUtf8].map((res) => ({ status: res.status, body: res.body })),
      ).toEqual([
        { status: 415, body: { message: 'The request body must be UTF-8 (charset=utf-8).' } },
        {
          status: 415,
          body: { message: 'The request body must not be compressed (no Content-Encoding).' },
        },
        { status: 415, body: { message: 'The request body must be UTF-8 text.' } },
      ]);
      expect(memory.held).toBe(memory.limit);
    } finally {
      hold();
    }
  });

  it("gives a body's room back once its answer is made, though the answer waits behind another on its connection", async () => {
    // A page of large payloads that the client never reads stays queued on its connection, and
    // so does the answer to the large delivery pipelined behind it; the delivery's room does not.
    for (let i = 0; i < 24; i++) await send(large()).expect(200);
    const from = capturedLogs().length;
    let newest: request.Response | undefined;
    const acquire = jest.spyOn(memory, 'acquire');
    const body = JSON.stringify(large());
    const bodyRoom = 24 * Buffer.byteLength(body);
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    try {
      socket.pause();
      socket.write(
        `GET /v2/webhooks?result_mode%5Battributes%5D%5Blimit%5D=24 HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${read}\r\n\r\n` +
          `POST /v2/webhooks HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${write}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n` +
          body,
      );
      await until(() => acquire.mock.calls.length === 2);
      const pageRoom = acquire.mock.calls.map(([bytes]) => bytes).find((b) => b !== bodyRoom)!;
      expect(acquire.mock.calls.map(([bytes]) => bytes).sort()).toEqual(
        [pageRoom, bodyRoom].sort(),
      );
      // The page's room is held while it is unread; the delivery's is given back.
      await until(() => memory.held === pageRoom);
      newest = await request(t.http)
        .get('/v2/webhooks')
        .query({ 'result_mode[attributes][limit]': 1 })
        .set('authorization', read);
      expect(newest.body.data[0].payload.attempt_id).toBe(JSON.parse(body).payload.attempt_id);
    } finally {
      acquire.mockRestore();
      socket.destroy();
    }
    await until(() => memory.held === 0);
    // Each of the two is logged once; the delivery, whose answer never left its queue, as gone.
    await until(() => requestLinesSince(from).some((line) => line.clientGone));
    const lines = requestLinesSince(from).filter(
      (line) => line.req.id !== newest!.headers['x-request-id'],
    );
    expect(
      lines.map(({ req, res, clientGone }) => ({
        method: req.method,
        address: req.remoteAddress,
        status: res.statusCode,
        gone: clientGone === true,
      })),
    ).toEqual([
      { method: 'GET', address: '127.0.0.1', status: 200, gone: expect.any(Boolean) },
      // Its connection closed before its line was written: its address is known all the same.
      { method: 'POST', address: '127.0.0.1', status: 200, gone: true },
    ]);
  }, 30_000);

  it('drops at once, unparsed, a body whose client left while it waited for room: not handled, no room kept', async () => {
    const from = capturedLogs().length;
    const receive = jest.spyOn(t.app.get(WebhookProcessor), 'receive');
    const acquire = jest.spyOn(memory, 'acquire');
    const hold = await memory.acquire(memory.limit);
    const gone = large();
    const text = JSON.stringify(gone);
    const accepted = new Promise<Socket>((resolve) => t.http.once('connection', resolve));
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    let stays: Promise<request.Response> | undefined;
    try {
      socket.write(
        `POST /v2/webhooks HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${write}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n` +
          text,
      );
      const serverSide = await accepted;
      // Its body has arrived and waits for room (the test's own acquire() was the first call).
      await until(() => acquire.mock.calls.length === 2);
      socket.resetAndDestroy();
      await until(() => serverSide.destroyed);
      // Its wait stops at once, though the budget is still full: answered (to no one) and logged.
      await until(() => capturedLogs().slice(from).includes('"clientGone":true'));
      // A body from a client that stays waits behind it, and is granted room after it.
      stays = send(large()).then((res) => res);
      await until(() => acquire.mock.calls.length === 3);
    } finally {
      hold();
      acquire.mockRestore();
    }
    const res = await stays!;
    expect(res.status).toBe(200);
    expect(receive).toHaveBeenCalledTimes(1);
    receive.mockRestore();
    const newest = await request(t.http)
      .get('/v2/webhooks')
      .query({ 'result_mode[attributes][limit]': 2 })
      .set('authorization', read);
    const stored = newest.body.data.map(
      (e: { payload: { attempt_id: number } }) => e.payload.attempt_id,
    );
    expect(stored).not.toContain(gone.payload.attempt_id);
    await until(() => memory.held === 0);
    // Logged all the same, as gone, once.
    const lines = requestLinesSince(from);
    const goneLines = lines.filter((line) => line.clientGone === true);
    expect(
      goneLines.map(({ level, req, res }) => ({ level, method: req.method, url: req.url, res })),
    ).toEqual([{ level: 40, method: 'POST', url: '/v2/webhooks', res: { statusCode: 408 } }]);
    expect(lines.filter((line) => line.req.id === goneLines[0].req.id)).toHaveLength(1);
  }, 30_000);

  it('takes no room for a body that has not arrived: a client that declares 1 MiB and sends nothing holds none', async () => {
    const socket = connect(port, '127.0.0.1');
    try {
      const told = firstData(socket);
      socket.write(
        `POST /v2/webhooks HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${write}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 1048576\r\n' +
          'Expect: 100-continue\r\n\r\n',
      );
      // 100 Continue: the route's hooks before the body have run.
      expect(await told).toMatch(/^HTTP\/1\.1 100 Continue\r\n/);
      expect(memory.held).toBe(0);
    } finally {
      socket.destroy();
    }
  });

  it.each([
    ["with the caller's X-Request-Id", 'cut-short-1'],
    ['without one', undefined],
  ])(
    "answers a body its client cut short (a FIN before its declared length) 400 under the request's own id, in one log line (%s)",
    async (_name, sent) => {
      const from = capturedLogs().length;
      const res = await rawRequest(
        t,
        `POST /v2/webhooks HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${write}\r\n` +
          (sent ? `X-Request-Id: ${sent}\r\n` : '') +
          'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"event":',
        { halfClose: true },
      );
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
        status: 400,
        body: { message: 'The request is malformed.' },
      });
      const id = res.headers['x-request-id'];
      if (sent) expect(id).toBe(sent);
      // A request after it is logged after everything logged of it.
      await request(t.http)
        .get('/v2/webhooks')
        .set('authorization', read)
        .set('x-request-id', 'after-cut')
        .expect(200);
      await until(() => requestLinesSince(from).some((line) => line.req.id === 'after-cut'));
      // (An earlier test's connection may close meanwhile: its lines are not this request's.)
      const lines = requestLinesSince(from).filter((line) => line.req.id === id);
      expect(lines.map(({ req, res, clientGone }) => ({ req, res, clientGone }))).toEqual([
        {
          req: { id, method: 'POST', url: '/v2/webhooks', remoteAddress: '127.0.0.1' },
          res: { statusCode: 400 },
          clientGone: undefined,
        },
      ]);
    },
  );

  it.each([
    ['no Authorization header', '', errors.unauthenticated],
    ['an ill-formed bearer header', 'Authorization: Bearer\r\n', errors.invalidToken],
  ])(
    'gives a request answered 401 before its body (%s) no second answer when its client then cuts the body short',
    async (_name, authorization, answer) => {
      const from = capturedLogs().length;
      // The 401 is made before the body is read, on a connection kept alive to read the body
      // past; the FIN part-way through that body must not earn the same request a 400 as well.
      const res = await rawRequest(
        t,
        `POST /v2/webhooks HTTP/1.1\r\nHost: localhost\r\n${authorization}` +
          'X-Request-Id: answered-then-cut\r\n' +
          'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"event":',
        { halfClose: true },
      );
      expect(res.status).toBe(401);
      expect(res.headers['x-request-id']).toBe('answered-then-cut');
      // The body is the 401's alone: nothing follows it on the connection.
      expect(res.body).toBe(res.body.slice(0, Number(res.headers['content-length'])));
      expect(JSON.parse(res.body)).toEqual(answer);
      await request(t.http)
        .get('/v2/webhooks')
        .set('authorization', read)
        .set('x-request-id', 'after-answered-then-cut')
        .expect(200);
      await until(() =>
        requestLinesSince(from).some((line) => line.req.id === 'after-answered-then-cut'),
      );
      // One log line for it: the 401.
      expect(
        requestLinesSince(from)
          .filter((line) => line.req.id === 'answered-then-cut')
          .map(({ res }) => res.statusCode),
      ).toEqual([401]);
    },
  );

  /** Sends `bytes` as they are (supertest would serialize a Buffer as JSON). */
  function postBytes(
    path: string,
    headers: Record<string, string>,
    bytes: Buffer,
  ): Promise<{ status: number; body: unknown }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: JSON.parse(String(Buffer.concat(chunks))) }),
        );
      });
      req.on('error', reject);
      req.end(bytes);
    });
  }
});

/** The first bytes the server sends on `socket`. */
function firstData(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    socket.once('data', (chunk) => resolve(String(chunk)));
    socket.once('error', reject);
  });
}
