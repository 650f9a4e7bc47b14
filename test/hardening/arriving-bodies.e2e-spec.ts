import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import request from 'supertest';
import { arrivingBodies } from '../../src/common/parsers/arriving-bodies.js';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { authHeader, senderHeaders } from '../support/auth.js';
import { rawRequest } from '../support/raw-http.js';
import { errors, oauthErrors } from '../support/responses.js';
import { until } from '../support/until.js';

/**
 * Bodies of 16 KiB or more take room in `arrivingBodies` from their first byte until their answer
 * is made (src/common/parsers/arriving-bodies.ts): connections that send most of a large body and
 * then stall cannot hold unbounded memory until the request timeout. Past the room, a request is
 * answered 503 as soon as a chunk of its body does not fit, after what its route decides before
 * the body (CONTRACT §2), and its connection is closed.
 */
describe('bodies as they arrive', () => {
  let t: TestApp;
  let write: string;
  let read: string;
  let port: number;
  beforeAll(async () => {
    t = await startTestApp();
    ({ write, read } = await senderHeaders(t));
    if (!t.http.listening) await new Promise<void>((done) => t.http.listen(0, '127.0.0.1', done));
    port = (t.http.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t.close();
  });

  const text = () => JSON.stringify(attemptCompleted({ filler: 'x'.repeat(200_000) } as object));
  const head = (authorization: string, length: number, path = '/v2/webhooks') =>
    `POST ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${authorization}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

  it('counts the bytes of a body that is still arriving, and gives them back once it is answered', async () => {
    const body = text();
    const socket = connect(port, '127.0.0.1');
    try {
      const answer = firstData(socket);
      socket.write(head(write, body.length) + body.slice(0, 150_000));
      await until(() => arrivingBodies.held >= 150_000);
      expect(arrivingBodies.held).toBeLessThanOrEqual(body.length);
      socket.write(body.slice(150_000));
      expect(await answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      await until(() => arrivingBodies.held === 0);
    } finally {
      socket.destroy();
    }
  });

  it('gives the room back when the client leaves in the middle of its body', async () => {
    const body = text();
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(head(write, body.length) + body.slice(0, 150_000));
    await until(() => arrivingBodies.held >= 150_000);
    socket.resetAndDestroy();
    await until(() => arrivingBodies.held === 0);
  });

  it('answers 503 at once, and closes the connection, a body that finds no room as it arrives', async () => {
    const reserved = arrivingBodies.limit - 50_000;
    const hold = await arrivingBodies.acquire(reserved);
    try {
      const body = text();
      const res = await rawRequest(t, head(write, body.length) + body);
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
        status: 503,
        body: {
          message: 'Too many large request bodies are arriving right now; try again shortly.',
        },
      });
      expect(res.headers).toMatchObject({ 'retry-after': '1', connection: 'close' });
      expect(res.headers['x-request-id']).toBeTruthy();
      await until(() => arrivingBodies.held === reserved);
      // A small body takes no room: it passes meanwhile.
      await request(t.http)
        .post('/v2/webhooks')
        .set('authorization', write)
        .send(attemptCompleted())
        .expect(200);
    } finally {
      hold();
    }
    expect(arrivingBodies.held).toBe(0);
    await request(t.http)
      .post('/v2/webhooks')
      .set('authorization', write)
      .set('content-type', 'application/json')
      .send(text())
      .expect(200);
  });

  it('answers a chunked body at an OAuth endpoint that finds no room in RFC 6749 shape', async () => {
    const hold = await arrivingBodies.acquire(arrivingBodies.limit - 1_000);
    try {
      const form = `grant_type=client_credentials&scope=${'x'.repeat(4_000)}`;
      const res = await rawRequest(
        t,
        'POST /oauth/token HTTP/1.1\r\nHost: localhost\r\n' +
          'Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n' +
          `${form.length.toString(16)}\r\n${form}\r\n0\r\n\r\n`,
      );
      expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
        status: 503,
        body: oauthErrors.unavailable,
      });
      expect(res.headers).toMatchObject({ 'retry-after': '1', 'cache-control': 'no-store' });
    } finally {
      hold();
    }
    await until(() => arrivingBodies.held === 0);
  });

  it('answers first what the route decides before its body, room or not (CONTRACT §2)', async () => {
    const hold = await arrivingBodies.acquire(arrivingBodies.limit - 50_000);
    try {
      const body = text();
      const customers = await authHeader(t, ['customers:write']);
      const answers = [
        await rawRequest(t, head('Bearer not-a-token-of-ours', body.length) + body),
        await rawRequest(t, head(read, body.length) + body),
        await rawRequest(
          t,
          head(customers, body.length, '/v2/customers/no-such-customer/company').replace(
            'POST',
            'PUT',
          ) + body,
        ),
      ];
      expect(answers.map((res) => ({ status: res.status, body: JSON.parse(res.body) }))).toEqual([
        { status: 401, body: errors.invalidToken },
        { status: 403, body: errors.insufficientScope },
        { status: 404, body: errors.customerNotFound },
      ]);
    } finally {
      hold();
    }
    await until(() => arrivingBodies.held === 0);
  });
});

/** The first bytes the server sends on `socket`. */
function firstData(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    socket.once('data', (chunk) => resolve(String(chunk)));
    socket.once('error', reject);
  });
}
