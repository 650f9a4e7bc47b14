import { jest } from '@jest/globals';
import { once } from 'node:events';
import { connect } from 'node:net';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/index.js';
import { CompletedAttempt } from '../../src/learning/completed-attempt.entity.js';
import { WebhookEvent } from '../../src/webhooks/webhook-event.entity.js';
import { createCustomer } from '../factories/customer.factory.js';
import { startTestApp } from '../support/app.js';
import { authHeader } from '../support/auth.js';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { startServer } from '../support/processes.js';
import { remoteAuthHeader } from '../support/remote-auth.js';
import { oauthErrors } from '../support/responses.js';

// A server start, a token through the CLI and a stop: half a minute or more on a loaded machine.
jest.setTimeout(90_000);

describe('graceful shutdown (SIGTERM to the built server)', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('finishes in-flight webhooks, stops accepting, closes the database and exits 0 within 10 s', async () => {
    const server = await startServer({ DATABASE_URL: database.url, LOG_LEVEL: 'warn' });
    const auth = await remoteAuthHeader(server, database.url, ['webhooks:write']);
    const deliver = async (attemptId: number) => {
      try {
        const res = await fetch(`${server.baseUrl}/v2/webhooks`, {
          method: 'POST',
          headers: { authorization: auth, 'content-type': 'application/json' },
          body: JSON.stringify({
            event: 'learning.attempt.completed',
            payload: { user_id: 1, module_id: 1, attempt_id: attemptId },
          }),
        });
        const body = (await res.json()) as Record<string, unknown>;
        return { attemptId, status: res.status, body, answeredAt: Date.now() };
      } catch {
        return { attemptId, status: null, body: null, answeredAt: Date.now() };
      }
    };

    const inFlight = Array.from({ length: 200 }, (_, i) => deliver(i + 1));
    await Promise.race(inFlight);
    const exited = once(server.child, 'exit');
    const termAt = Date.now();
    server.child.kill('SIGTERM');
    const results = await Promise.all(inFlight);
    const [code] = (await exited) as [number | null];
    // 0, not the 10 s watchdog's 1: the stop finished its requests and closed in time.
    expect(code).toBe(0);

    // Requests the server had taken in were answered 200, some of them after SIGTERM; requests
    // that reached it after SIGTERM (on kept-alive connections) were refused with a 503.
    const answered = results.filter((r) => r.status === 200);
    expect(answered.some((r) => r.answeredAt > termAt)).toBe(true);
    for (const r of results.filter((r) => r.status !== 200 && r.status !== null)) {
      expect({ status: r.status, body: r.body }).toEqual({
        status: 503,
        body: { message: 'The service is temporarily unavailable.' },
      });
    }
    // After the stop, nothing listens.
    await expect(fetch(`${server.baseUrl}/health`)).rejects.toThrow();

    // Every acknowledged webhook is stored and processed.
    const dataSource = new DataSource(buildDataSourceOptions({ url: database.url }));
    await dataSource.initialize();
    try {
      const events = await dataSource.getRepository(WebhookEvent).count();
      const effects = await dataSource.getRepository(CompletedAttempt).count();
      expect(events).toBe(answered.length);
      expect(effects).toBe(answered.length);
    } finally {
      await dataSource.destroy();
    }
  });

  it('refuses a request that arrives during the stop with 503, in RFC 6749 shape at /oauth/*, on /health too', async () => {
    // One app: AppModule reads its configuration (the database) once per test file. Its close()
    // fails on an answer the OpenAPI document does not declare (GET /health's 503 was not).
    const t = await startTestApp();
    const auth = await authHeader(t, ['customers:write']);
    const { id } = await createCustomer(t, { name: 'A', type: 'plc' });
    const { port } = (t.http.listening ? t.http : t.http.listen(0)).address() as { port: number };
    // Two connections, each with a PUT in flight, its body not sent yet: 100 Continue says the
    // server waits for it.
    const body = '{"name":"B"}';
    const inFlight = async () => {
      const socket = connect(port, '127.0.0.1');
      const received = { data: '' };
      socket.on('data', (chunk) => (received.data += String(chunk)));
      socket.write(
        `PUT /v2/customers/${id}/company HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
          'Expect: 100-continue\r\n\r\n',
      );
      while (!received.data.includes('100 Continue')) await once(socket, 'data');
      return { socket, received };
    };
    const [oauth, health] = [await inFlight(), await inFlight()];
    const stopped = t.close();
    // The stop has begun once the port takes no new connection.
    const accepts = () =>
      new Promise<boolean>((resolve) => {
        const probe = connect(port, '127.0.0.1');
        probe.once('connect', () => resolve(true)).once('error', () => resolve(false));
        probe.once('connect', () => probe.destroy());
      });
    while (await accepts()) continue;
    // Each PUT's body, and a request pipelined behind it on the same connection.
    const form = 'grant_type=client_credentials';
    oauth.socket.write(
      `${body}POST /oauth/token HTTP/1.1\r\nHost: x\r\n` +
        `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\n\r\n${form}`,
    );
    health.socket.write(`${body}GET /health HTTP/1.1\r\nHost: x\r\n\r\n`);
    await Promise.all([once(oauth.socket, 'close'), once(health.socket, 'close')]);
    await stopped;
    // The request in flight is finished; the one after it is refused, as an OAuth error there.
    const refusal = ({ data }: { data: string }) => {
      const answers = data.split(/(?=HTTP\/1\.1 )/);
      expect(answers.map((answer) => answer.split('\r\n')[0])).toEqual([
        'HTTP/1.1 100 Continue',
        'HTTP/1.1 200 OK',
        'HTTP/1.1 503 Service Unavailable',
      ]);
      expect(answers[2]).toMatch(/\r\nretry-after: 1\r\n/);
      return answers[2];
    };
    const refused = refusal(oauth.received);
    expect(refused).toMatch(/\r\ncache-control: no-store\r\n/);
    expect(JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4))).toEqual(
      oauthErrors.unavailable,
    );
    const plain = refusal(health.received);
    expect(JSON.parse(plain.slice(plain.indexOf('\r\n\r\n') + 4))).toEqual({
      message: 'The service is temporarily unavailable.',
    });
  });
});
