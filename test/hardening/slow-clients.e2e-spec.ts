import { Agent, get as httpGet } from 'node:http';
import { connect, Socket } from 'node:net';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { ServerProcess, startServer } from '../support/processes.js';
import { remoteAuthHeader } from '../support/remote-auth.js';

/**
 * Resolves with what the server sent once it closes the connection. The client below never
 * finishes its request, so only the server's limits can close it: its defaults (10 s for
 * headers, 30 s for a request) lie beyond the 15 s these tests are given, the limits set here
 * (1 s, 1.5 s) well within it.
 */
function untilClosed(socket: Socket): Promise<{ data: string }> {
  let data = '';
  socket.on('data', (chunk) => (data += chunk));
  return new Promise((resolve) => {
    socket.on('close', () => resolve({ data }));
    socket.on('error', () => undefined);
  });
}

describe('slow and abusive clients (the built server)', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let port: number;

  beforeAll(async () => {
    database = await createTestDatabase();
    server = await startServer({
      DATABASE_URL: database.url,
      HTTP_HEADERS_TIMEOUT_MS: '1000',
      HTTP_REQUEST_TIMEOUT_MS: '1500',
    });
    port = Number(new URL(server.baseUrl).port);
  });
  afterAll(async () => {
    await server.stop();
    await database.drop();
  });

  it('cuts off a client that trickles its headers (slowloris)', async () => {
    const socket = connect(port, '127.0.0.1');
    const closed = untilClosed(socket);
    socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n');
    const drip = setInterval(() => socket.write('X-Slow: 1\r\n'), 200);
    const { data } = await closed;
    clearInterval(drip);
    expect(data).toMatch(/^HTTP\/1\.1 408 /);
  }, 15_000);

  it('answers a head cut off by the timeout with a 408 the OpenAPI document declares, on a GET and at /oauth', async () => {
    const cutOff = async (head: string) => {
      const socket = connect(port, '127.0.0.1');
      const closed = untilClosed(socket);
      socket.write(head);
      const { data } = await closed;
      return {
        status: data.split('\r\n')[0],
        body: JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4)) as unknown,
      };
    };
    // Node's parser keeps the path of an unfinished head to itself: the plain shape everywhere.
    const timedOut = {
      status: 'HTTP/1.1 408 Request Timeout',
      body: { message: 'The request took too long to arrive.' },
    };
    expect(await cutOff('GET /health HTTP/1.1\r\nHost: localhost\r\n')).toEqual(timedOut);
    expect(await cutOff('POST /oauth/token HTTP/1.1\r\nHost: localhost\r\n')).toEqual(timedOut);
    const document = (await (await fetch(`${server.baseUrl}/docs/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const declared = (path: string, method: string) =>
      JSON.stringify(document.paths[path][method].responses['408'] ?? null);
    // Every operation, those without a body too; the plain shape among /oauth's alternatives.
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of Object.keys(item)) {
        expect({ path, method, declared: declared(path, method) !== 'null' }).toEqual({
          path,
          method,
          declared: true,
        });
      }
    }
    expect(declared('/oauth/token', 'post')).toContain('#/components/schemas/ErrorDto');
  }, 15_000);

  it('cuts off a client whose body never finishes', async () => {
    // With a valid token, so that the request is waiting for its body (one without is refused
    // before the body is read).
    const auth = await remoteAuthHeader(server, database.url, ['webhooks:write']);
    const socket = connect(port, '127.0.0.1');
    const closed = untilClosed(socket);
    socket.write(
      `POST /v2/webhooks HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${auth}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"event":',
    );
    // Cut at the request's limit, and told why.
    const { data } = await closed;
    expect(data).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4))).toEqual({
      message: 'The request took too long to arrive.',
    });
  }, 15_000);

  it('gives a request answered 401 before its body no second answer (408) when its body then stalls', async () => {
    const socket = connect(port, '127.0.0.1');
    const closed = untilClosed(socket);
    // No token: answered before the body is read, on a connection kept alive to read it past.
    socket.write(
      'POST /v2/webhooks HTTP/1.1\r\nHost: localhost\r\n' +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"event":',
    );
    // Closed at the request's limit, with the 401 its one answer.
    const { data } = await closed;
    expect(data).toMatch(/^HTTP\/1\.1 401 /);
    expect(data.match(/HTTP\/1\.1 \d{3} /g)).toEqual(['HTTP/1.1 401 ']);
    expect(JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4))).toEqual({
      message: 'Unauthenticated.',
    });
  }, 15_000);

  it('keeps an idle keep-alive connection open past 5 s and the slow-client limits', async () => {
    // One connection, reused: a client (or a proxy) that idles between requests longer than
    // the old 5 s must never find it closed under it.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<unknown>();
    const get = () =>
      new Promise<{ status: number; keepAlive: string | undefined }>((resolve, reject) => {
        const req = httpGet(`${server.baseUrl}/health`, { agent }, (res) => {
          res.resume();
          res.on('end', () =>
            resolve({ status: res.statusCode!, keepAlive: String(res.headers['keep-alive']) }),
          );
        });
        req.on('socket', (socket) => sockets.add(socket));
        req.on('error', reject);
      });
    try {
      expect(await get()).toEqual({ status: 200, keepAlive: 'timeout=72' });
      const [socket] = sockets as Set<Socket>;
      for (let round = 0; round < 2; round++) {
        // The idle gap itself is what is tested (the server's timer runs in another process, out
        // of a fake clock's reach): the socket is watched through it, and a close fails at once.
        expect(await closedWithin(socket, 6000)).toBe(false);
        expect(await get()).toEqual({ status: 200, keepAlive: 'timeout=72' });
      }
      expect(sockets.size).toBe(1);
    } finally {
      agent.destroy();
    }
  }, 30_000);

  /** True as soon as `socket` closes, false once it stayed open for `ms`. */
  const closedWithin = (socket: Socket, ms: number) =>
    new Promise<boolean>((resolve) => {
      const open = setTimeout(() => {
        socket.off('close', closed);
        resolve(false);
      }, ms);
      const closed = () => {
        clearTimeout(open);
        resolve(true);
      };
      socket.once('close', closed);
    });

  it('keeps serving other clients meanwhile', async () => {
    const res = await fetch(`${server.baseUrl}/health`);
    expect(res.status).toBe(200);
  });
});
