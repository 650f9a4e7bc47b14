import { once } from 'node:events';
import { connect } from 'node:net';
import pg from 'pg';
import request from 'supertest';
import { createClient, TestClient, tokenRequest } from '../factories/client.factory.js';
import { createCustomer } from '../factories/customer.factory.js';
import { authHeader } from '../support/auth.js';
import { startTestApp, TestApp } from '../support/app.js';
import { usingPostgres } from '../support/database.js';
import { rawRequest } from '../support/raw-http.js';
import { errors, oauthErrors } from '../support/responses.js';
import { WebhookEvent } from '../../src/webhooks/webhook-event.entity.js';

const onPostgres = usingPostgres() ? describe : describe.skip;

// One app for the file, shared by the blocks below: AppModule reads its configuration (the
// database URL among it) once per test file.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

/**
 * What a sixth outside review found (docs/contract.md §2): a PostgreSQL database that refuses new
 * connections (ALLOW_CONNECTIONS false) was a 500 on every route, not the contract's 503.
 */
onPostgres(
  'sixth outside review: a database that refuses connections (PostgreSQL pass only)',
  () => {
    let client: TestClient;
    let auth: string;
    let customerId: number;
    beforeAll(async () => {
      client = await createClient(t, { scopes: ['customers:read'] });
      auth = await authHeader(t, ['customers:read']);
      customerId = (await createCustomer(t, { name: 'A', type: 'plc' })).id;
    });

    /** `sql` on the same server's `postgres` database, as its administrator would. */
    async function admin(sql: string) {
      const url = new URL(t.database.url);
      const name = decodeURIComponent(url.pathname.slice(1));
      url.pathname = '/postgres';
      const connection = new pg.Client({ connectionString: url.toString() });
      await connection.connect();
      try {
        await connection.query(sql.replaceAll('$db', `"${name}"`).replaceAll('$name', `'${name}'`));
      } finally {
        await connection.end();
      }
    }

    it('answers 503 while the database refuses new connections, and serves again once it allows them', async () => {
      await admin('ALTER DATABASE $db ALLOW_CONNECTIONS false');
      try {
        // The pool's connections are cut too: every request needs a new one, which is refused.
        await admin(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $name AND pid <> pg_backend_pid()',
        );
        const read = await request(t.http)
          .get(`/v2/customers/${customerId}`)
          .set('authorization', auth);
        expect({ status: read.status, body: read.body }).toEqual({
          status: 503,
          body: errors.databaseUnavailable,
        });
        const ready = await request(t.http).get('/health/ready');
        expect({
          status: ready.status,
          body: ready.body,
          retry: ready.headers['retry-after'],
        }).toEqual({ status: 503, body: errors.notReady, retry: '1' });
        const token = await tokenRequest(t, client, {
          grant_type: 'client_credentials',
          scope: 'customers:read',
        });
        // The OAuth endpoint's 503 has the RFC 6749 body, as its other errors do.
        expect({
          status: token.status,
          body: token.body,
          retry: token.headers['retry-after'],
        }).toEqual({ status: 503, body: oauthErrors.unavailable, retry: '1' });
      } finally {
        await admin('ALTER DATABASE $db ALLOW_CONNECTIONS true');
      }
      await request(t.http)
        .get(`/v2/customers/${customerId}`)
        .set('authorization', auth)
        .expect(200);
    });
  },
);

describe('sixth outside review: numbers a stored payload could not hold', () => {
  it('refuses a number beyond a double (it was acknowledged and stored as null), and stores nothing', async () => {
    const auth = await authHeader(t, ['webhooks:write']);
    const res = await request(t.http)
      .post('/v2/webhooks')
      .set('authorization', auth)
      .set('content-type', 'application/json')
      .send(
        '{"event":"learning.attempt.completed","payload":{"user_id":1,"module_id":2,"attempt_id":3,"big":1e400}}',
      );
    expect({ status: res.status, body: res.body }).toEqual({
      status: 400,
      body: {
        message:
          'The request body is malformed: it holds a number too large for a double (over 1.8e308).',
      },
    });
    expect(await t.db.getRepository(WebhookEvent).count()).toBe(0);
  });
});

describe('sixth outside review: an answer sent before the body is read', () => {
  it('reaches a client still sending its body: the connection is closed gently, never reset under it', async () => {
    // A 401 before the body of a 5 MB upload: the server answers, then closes. Destroyed at once,
    // the connection was reset by the bytes still arriving, and the reset could discard the
    // answer (curl: "Failure when receiving data", 4 times in 20).
    const { port } = (t.http.listening ? t.http : t.http.listen(0)).address() as { port: number };
    const socket = connect(port, '127.0.0.1');
    const errors: string[] = [];
    socket.on('error', (error: NodeJS.ErrnoException) => errors.push(error.code ?? error.message));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    const closed = once(socket, 'close');
    socket.write(
      'PUT /v2/customers/1/company HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer not-a-token\r\n' +
        'Content-Type: application/json\r\nContent-Length: 5000000\r\n\r\n{"name":"',
    );
    while (!answer.includes('\r\n\r\n')) await once(socket, 'data');
    // The client goes on sending its body after the answer, as one that does not read while it
    // uploads does, then ends.
    const chunk = Buffer.alloc(64 * 1024, 'a');
    for (let i = 0; i < 16; i++) {
      if (!socket.write(chunk)) await once(socket, 'drain');
    }
    socket.end();
    const [hadError] = (await closed) as [boolean];
    expect({ errors, hadError, status: answer.split(' ')[1] }).toEqual({
      errors: [],
      hadError: false,
      status: '401',
    });
  });
});

describe('sixth outside review: two Host headers', () => {
  it("is 400 in the contract's shape (RFC 9112 §3.2), as a missing one is", async () => {
    const res = await rawRequest(
      t,
      'GET /health HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nConnection: close\r\n\r\n',
    );
    expect({ status: res.status, body: JSON.parse(res.body) }).toEqual({
      status: 400,
      body: { message: 'The request is malformed.' },
    });
    const one = await rawRequest(
      t,
      'GET /health HTTP/1.1\r\nHost: a.example\r\nConnection: close\r\n\r\n',
    );
    expect(one.status).toBe(200);
  });
});
