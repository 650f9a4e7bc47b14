import { jest } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { processMemory } from '../../src/common/memory-budget.js';
import { WebhookEvent } from '../../src/webhooks/webhook-event.entity.js';
import { WebhookSecretCipher } from '../../src/webhooks/webhook-secret-cipher.js';
import { WebhookSignatures } from '../../src/webhooks/webhook-signatures.service.js';
import { WebhookSigningSecret } from '../../src/webhooks/webhook-signing-secret.entity.js';
import { WebhookSigningSecretsService } from '../../src/webhooks/webhook-signing-secrets.service.js';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { senderHeaders } from '../support/auth.js';
import { freePort, runNode } from '../support/processes.js';
import { bearerChallenges, errors, webhookSignature } from '../support/responses.js';
import { until } from '../support/until.js';

// The CLI tests run the built CLI as a separate process, seconds each on a busy machine.
jest.setTimeout(90000);

const KEY = randomBytes(32).toString('base64');
const SECRET_FORMAT = /^whsec_[A-Za-z0-9+/]{43}=$/;

interface Sender {
  write: string;
  read: string;
  clientId: string;
}

/** Standard Webhooks headers made by the library's own signer. */
function signed(
  secret: string,
  body: string,
  { id = `msg_${randomUUID()}`, at = new Date() }: { id?: string; at?: Date } = {},
) {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  };
}

const minutes = (n: number) => new Date(Date.now() + n * 60_000);

/** docs/contract.md §6 signed deliveries: Standard Webhooks signatures per sending client. */
describe('signed webhooks (Standard Webhooks, per client)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_SECRET_KEY: KEY, REVOCATION_REFRESH_MS: '250' } });
  });
  afterAll(async () => {
    await t.close();
  });

  const secrets = () => t.app.get(WebhookSigningSecretsService);
  const post = (auth: string | undefined, body: string, headers: Record<string, string> = {}) => {
    const req = request(t.http).post('/v2/webhooks').set('content-type', 'application/json');
    if (auth) req.set('authorization', auth);
    return req.set(headers).send(body);
  };
  const text = (body: unknown) => JSON.stringify(body);
  const eventsOf = (clientId: string) => t.db.getRepository(WebhookEvent).findBy({ clientId });

  const expectRefused = (
    res: { status: number; body: unknown; headers: Record<string, string> },
    body: { message: string },
  ) => {
    expect(res.status).toBe(401);
    expect(res.body).toEqual(body);
    expect(res.headers['www-authenticate']).toBe(webhookSignature.challenge);
  };

  describe('a client with a secret', () => {
    let sender: Sender;
    let secret: string;
    beforeAll(async () => {
      sender = await senderHeaders(t);
      ({ secret } = await secrets().create(sender.clientId));
    });

    it('has its signed delivery accepted, processed and stored as usual', async () => {
      const body = text(attemptCompleted());
      const res = await post(sender.write, body, signed(secret, body)).expect(200);
      expect(res.body.data).toMatchObject({
        event: 'learning.attempt.completed',
        status: 'processed',
      });
      const row = await t.db.getRepository(WebhookEvent).findOneByOrFail({ id: res.body.data.id });
      expect(row).toMatchObject({ clientId: sender.clientId, status: 'processed', attempts: 1 });
    });

    it('is checked over the body bytes as sent (spacing, key order, escapes kept)', async () => {
      const { payload } = attemptCompleted();
      const body = `{ "payload" : {"attempt_id":${payload.attempt_id},  "module_id":3,"user_id":7, "note":"caf\\u00e9 é"},\n "event":"learning.attempt.completed" }`;
      await post(sender.write, body, signed(secret, body)).expect(200);
    });

    it('refuses a tampered body: 401, and nothing is stored', async () => {
      const sent = attemptCompleted();
      const headers = signed(secret, text(sent));
      const tampered = text({ ...sent, payload: { ...sent.payload, user_id: 8 } });
      const before = (await eventsOf(sender.clientId)).length;
      expectRefused(await post(sender.write, tampered, headers), webhookSignature.mismatch);
      expect(await eventsOf(sender.clientId)).toHaveLength(before);
    });

    it('refuses a signature by another secret', async () => {
      const body = text(attemptCompleted());
      const other = `whsec_${randomBytes(32).toString('base64')}`;
      const stackTraceLimit = Error.stackTraceLimit;
      expectRefused(await post(sender.write, body, signed(other, body)), webhookSignature.mismatch);
      // The check records no stack traces while it runs, and leaves the process's setting as it was.
      expect(Error.stackTraceLimit).toBe(stackTraceLimit);
    });

    it('refuses a timestamp more than 5 minutes old or ahead; accepts one within', async () => {
      for (const at of [minutes(-6), minutes(6), minutes(-60 * 24)]) {
        const body = text(attemptCompleted());
        expectRefused(
          await post(sender.write, body, signed(secret, body, { at })),
          webhookSignature.stale,
        );
      }
      for (const at of [minutes(-4), minutes(4)]) {
        const body = text(attemptCompleted());
        await post(sender.write, body, signed(secret, body, { at })).expect(200);
      }
    });

    it('refuses a delivery without its signature headers, naming the missing ones', async () => {
      const body = text(attemptCompleted());
      const headers = signed(secret, body);
      expectRefused(
        await post(sender.write, body),
        webhookSignature.missing('webhook-id, webhook-timestamp, webhook-signature'),
      );
      for (const name of Object.keys(headers) as (keyof typeof headers)[]) {
        const rest: Record<string, string> = { ...headers };
        delete rest[name];
        expectRefused(await post(sender.write, body, rest), webhookSignature.missing(name));
      }
    });

    it('refuses malformed signature headers', async () => {
      const body = text(attemptCompleted());
      const headers = signed(secret, body);
      // A leading zero too: the library reads the number (parseInt) and checks the signature over
      // it, so `0<now>` was accepted only when signed over `<now>`, not over the header as sent.
      for (const timestamp of [
        'soon',
        '17e8',
        '-1',
        `${headers['webhook-timestamp']}.5`,
        `0${headers['webhook-timestamp']}`,
      ]) {
        expectRefused(
          await post(sender.write, body, { ...headers, 'webhook-timestamp': timestamp }),
          webhookSignature.malformedTimestamp,
        );
      }
      for (const signature of ['garbage', 'v1,', 'v1,abc  v1,def', ',abc']) {
        expectRefused(
          await post(sender.write, body, { ...headers, 'webhook-signature': signature }),
          webhookSignature.malformedSignature,
        );
      }
      // Well formed, but no v1 signature among them.
      expectRefused(
        await post(sender.write, body, { ...headers, 'webhook-signature': 'v2,abc' }),
        webhookSignature.mismatch,
      );
    });

    it('answers a redelivery (same webhook-id, fresh signature) with the first id, once', async () => {
      const body = text(attemptCompleted());
      const id = `msg_${randomUUID()}`;
      const first = await post(sender.write, body, signed(secret, body, { id, at: minutes(-2) }));
      expect(first.status).toBe(200);
      const again = await post(sender.write, body, signed(secret, body, { id }));
      expect(again.status).toBe(200);
      expect(again.body.data.id).toBe(first.body.data.id);
      const row = await t.db
        .getRepository(WebhookEvent)
        .findOneByOrFail({ id: first.body.data.id });
      expect(row.attempts).toBe(1);
    });

    it('knows a signed delivery by its signed webhook-id: a replay under another Idempotency-Key is a redelivery', async () => {
      const delivery = attemptCompleted();
      const body = text(delivery);
      const headers = signed(secret, body);
      const first = await post(sender.write, body, { ...headers, 'idempotency-key': 'first' });
      expect(first.status).toBe(200);
      const replayed = await post(sender.write, body, { ...headers, 'idempotency-key': 'other' });
      expect({ status: replayed.status, id: replayed.body.data?.id }).toEqual({
        status: 200,
        id: first.body.data.id,
      });
      const stored = (await eventsOf(sender.clientId)).filter(
        (e) => JSON.parse(e.payload).attempt_id === delivery.payload.attempt_id,
      );
      expect(stored).toHaveLength(1);
    });

    it('checks token, scope, signature, then body', async () => {
      const invalid = text({ event: 'learning.attempt.completed', payload: { user_id: 'x' } });
      const badSignature = { ...signed(secret, invalid), 'webhook-signature': 'v1,AAAA' };

      const noToken = await post(undefined, invalid, badSignature);
      expect(noToken.status).toBe(401);
      expect(noToken.body).toEqual(errors.unauthenticated);
      expect(noToken.headers['www-authenticate']).toBe(bearerChallenges.missing);

      const wrongScope = await post(sender.read, invalid, badSignature);
      expect(wrongScope.status).toBe(403);
      expect(wrongScope.headers['www-authenticate']).toBe(
        bearerChallenges.insufficientScope('webhooks:write'),
      );

      expectRefused(await post(sender.write, invalid, badSignature), webhookSignature.mismatch);

      // A good signature over an invalid body: now the body is judged.
      const res = await post(sender.write, invalid, signed(secret, invalid));
      expect(res.status).toBe(422);
    });

    it('judges the signature headers before the body: 401, not 413, nor a wait for memory', async () => {
      // Over 1 MiB: refused by the HTTP layer before the route runs.
      const tooLarge = text(attemptCompleted({ filler: 'x'.repeat(1_100_000) } as object));
      expectRefused(
        await post(sender.write, tooLarge),
        webhookSignature.missing('webhook-id, webhook-timestamp, webhook-signature'),
      );
      expectRefused(
        await post(sender.write, tooLarge, signed(secret, tooLarge, { at: minutes(-6) })),
        webhookSignature.stale,
      );
      // Signed in good form, it is now the body's turn.
      const res = await post(sender.write, tooLarge, signed(secret, tooLarge));
      expect({ status: res.status, body: res.body }).toEqual({
        status: 413,
        body: errors.tooLarge,
      });
      // Large and within the limit, with the memory budget full: answered at once, not 503.
      const hold = await processMemory.acquire(processMemory.limit);
      try {
        const large = text(attemptCompleted({ filler: 'x'.repeat(200_000) } as object));
        const headers: Record<string, string> = { ...signed(secret, large) };
        delete headers['webhook-signature'];
        expectRefused(
          await post(sender.write, large, headers),
          webhookSignature.missing('webhook-signature'),
        );
        expect(processMemory.held).toBe(processMemory.limit);
      } finally {
        hold();
      }
    });

    it('stores the secret encrypted: the row reveals neither it nor its key', async () => {
      const [row] = await t.db
        .getRepository(WebhookSigningSecret)
        .findBy({ clientId: sender.clientId });
      const keyBytes = Buffer.from(secret.slice('whsec_'.length), 'base64');
      const dump = JSON.stringify(row);
      for (const form of [secret, keyBytes.toString('base64'), keyBytes.toString('hex')]) {
        expect(dump).not.toContain(form.slice(-20));
      }
      const context = `webhook-signing-secret:${row.id}:${row.clientId}`;
      expect(WebhookSecretCipher.fromText(KEY).decrypt(row.encryptedSecret, context)).toBe(secret);
      expect(() =>
        WebhookSecretCipher.fromText(randomBytes(32).toString('base64')).decrypt(
          row.encryptedSecret,
          context,
        ),
      ).toThrow(/does not decrypt/);
      // Bound to its client: the same ciphertext does not open for another one.
      expect(() =>
        WebhookSecretCipher.fromText(KEY).decrypt(
          row.encryptedSecret,
          `webhook-signing-secret:${row.id}:${randomUUID()}`,
        ),
      ).toThrow(/does not decrypt/);
    });
  });

  describe('rotation', () => {
    it('accepts either of two secrets, then only the newer once the older is retired', async () => {
      const sender = await senderHeaders(t);
      const { secret: older } = await secrets().create(sender.clientId);
      const { secret: newer } = await secrets().create(sender.clientId);
      expect(newer).not.toBe(older);

      for (const secret of [older, newer]) {
        const body = text(attemptCompleted());
        await post(sender.write, body, signed(secret, body)).expect(200);
      }
      // A sender may sign with both during its own switch-over (space-separated signatures).
      const body = text(attemptCompleted());
      const both = signed(older, body);
      const byNewer = new Webhook(newer).sign(
        both['webhook-id'],
        new Date(Number(both['webhook-timestamp']) * 1000),
        body,
      );
      await post(sender.write, body, {
        ...both,
        'webhook-signature': `${both['webhook-signature']} ${byNewer}`,
      }).expect(200);

      await expect(secrets().create(sender.clientId)).rejects.toThrow(
        'The client has 2 signing secrets already; retire one first (--retire 1 removes the older).',
      );

      expect(await secrets().retire(sender.clientId, 1)).toEqual({
        clientId: sender.clientId,
        live: 1,
      });
      const afterOlder = text(attemptCompleted());
      expectRefused(
        await post(sender.write, afterOlder, signed(older, afterOlder)),
        webhookSignature.mismatch,
      );
      const afterNewer = text(attemptCompleted());
      await post(sender.write, afterNewer, signed(newer, afterNewer)).expect(200);

      // Retiring the last secret turns signing off for the client.
      await secrets().retire(sender.clientId, 1);
      await post(sender.write, text(attemptCompleted())).expect(200);
    });
  });

  describe('a client without a secret', () => {
    it('is unaffected: unsigned deliveries pass, signature headers are not checked', async () => {
      const sender = await senderHeaders(t);
      await post(sender.write, text(attemptCompleted())).expect(200);
      const body = text(attemptCompleted());
      await post(sender.write, body, {
        ...signed(`whsec_${randomBytes(32).toString('base64')}`, body),
        'webhook-signature': 'v1,AAAA',
      }).expect(200);
    });

    it('keeps webhook-id as its idempotency key', async () => {
      const sender = await senderHeaders(t);
      const id = `msg_${randomUUID()}`;
      const first = await post(sender.write, text(attemptCompleted()), { 'webhook-id': id });
      const again = await post(sender.write, text(attemptCompleted()), { 'webhook-id': id });
      expect(first.status).toBe(200);
      expect(again.body.data.id).toBe(first.body.data.id);
    });
  });

  describe('clients:webhook-secret (CLI)', () => {
    const cli = (args: string[], env: Record<string, string | undefined> = {}) =>
      runNode('dist/src/cli.js', ['clients:webhook-secret', ...args], {
        DATABASE_URL: t.database.url,
        WEBHOOK_SECRET_KEY: KEY,
        ...env,
      });
    const json = (result: { code: number | null; stdout: string; stderr: string }) => {
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      expect(result.stdout.trim().split('\n')).toHaveLength(1);
      return JSON.parse(result.stdout) as Record<string, unknown>;
    };
    const accepts = async (sender: Sender, secret: string | null) => {
      const body = text(attemptCompleted());
      const res = await post(sender.write, body, secret ? signed(secret, body) : {});
      return res.status === 200;
    };

    it('creates, adds a second, refuses a third, retires; the running server follows', async () => {
      const sender = await senderHeaders(t);
      const first = json(await cli(['--client-id', sender.clientId]));
      expect(Object.keys(first)).toEqual(['client_id', 'secret']);
      expect(first.client_id).toBe(sender.clientId);
      expect(first.secret).toMatch(SECRET_FORMAT);
      const older = first.secret as string;
      // The server, another process's writer, learns of it by its refresh (or a cluster message).
      await until(async () => !(await accepts(sender, null)));
      expect(await accepts(sender, older)).toBe(true);

      const second = json(await cli(['--client-id', sender.clientId]));
      const newer = second.secret as string;
      expect(newer).toMatch(SECRET_FORMAT);
      expect(newer).not.toBe(older);
      await until(() => accepts(sender, newer));
      expect(await accepts(sender, older)).toBe(true);

      const third = await cli(['--client-id', sender.clientId]);
      expect(third.code).toBe(1);
      expect(third.stdout).toBe('');
      expect(JSON.parse(third.stderr)).toEqual({
        error:
          'The client has 2 signing secrets already; retire one first (--retire 1 removes the older).',
      });

      expect(json(await cli(['--client-id', sender.clientId, '--retire', '1']))).toEqual({
        client_id: sender.clientId,
        retired: 1,
        live_secrets: 1,
      });
      await until(async () => !(await accepts(sender, older)));
      expect(await accepts(sender, newer)).toBe(true);
    });

    it('refuses without WEBHOOK_SECRET_KEY, for an unknown client, and a bad --retire', async () => {
      const sender = await senderHeaders(t);
      const noKey = await cli(['--client-id', sender.clientId], { WEBHOOK_SECRET_KEY: undefined });
      expect(noKey.code).toBe(1);
      expect(JSON.parse(noKey.stderr).error).toMatch(/^WEBHOOK_SECRET_KEY is not set/);

      const unknown = await cli(['--client-id', randomUUID()]);
      expect(unknown.code).toBe(1);
      expect(JSON.parse(unknown.stderr)).toEqual({ error: 'Client not found.' });

      const none = await cli(['--client-id', sender.clientId, '--retire', '1']);
      expect(none.code).toBe(1);
      expect(JSON.parse(none.stderr)).toEqual({ error: 'The client has no signing secret.' });

      const bad = await cli(['--client-id', sender.clientId, '--retire', '3']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--retire must be 1 (the older secret) or 2 (the newer).');
      expect(
        await t.db.getRepository(WebhookSigningSecret).countBy({ clientId: sender.clientId }),
      ).toBe(0);
    });

    it('refuses to add a secret under a key that does not open the stored ones', async () => {
      const holder = await senderHeaders(t);
      json(await cli(['--client-id', holder.clientId]));
      const sender = await senderHeaders(t);
      const otherKey = await cli(['--client-id', sender.clientId], {
        WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
      });
      expect({ code: otherKey.code, stdout: otherKey.stdout }).toEqual({ code: 1, stdout: '' });
      expect(JSON.parse(otherKey.stderr).error).toMatch(
        /^WEBHOOK_SECRET_KEY does not decrypt the signing secrets already stored \(client [0-9a-f-]{36}\): set it to the key they were created with.* Nothing was changed\.$/,
      );
      expect(
        await t.db.getRepository(WebhookSigningSecret).countBy({ clientId: sender.clientId }),
      ).toBe(0);
      expect(
        await t.db.getRepository(WebhookSigningSecret).countBy({ clientId: holder.clientId }),
      ).toBe(1);
    });

    it('--help explains the command on stdout', async () => {
      const help = await cli(['--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(
        'Usage: npm run cli -- clients:webhook-secret --client-id <id> [--retire <n>]',
      );
      expect(help.stdout).toContain('--retire <n>');
      expect(help.stdout).toContain('WEBHOOK_SECRET_KEY');
    });
  });
  describe('secrets that cannot be decrypted (fail closed)', () => {
    it('refuse the deliveries of their client (503, logged), not accept them unsigned', async () => {
      const sender = await senderHeaders(t);
      const rows = t.db.getRepository(WebhookSigningSecret);
      const id = randomUUID();
      await rows.insert({
        id,
        clientId: sender.clientId,
        slot: 1,
        encryptedSecret: WebhookSecretCipher.fromText(randomBytes(32).toString('base64')).encrypt(
          `whsec_${randomBytes(32).toString('base64')}`,
          `webhook-signing-secret:${id}:${sender.clientId}`,
        ),
        createdAt: Date.now(),
      });
      expect(await t.app.get(WebhookSignatures).reload()).toEqual([
        expect.stringMatching(/^WEBHOOK_SECRET_KEY does not decrypt/),
      ]);
      const res = await post(sender.write, text(attemptCompleted()));
      expect(res.status).toBe(503);
      expect(res.body).toEqual(webhookSignature.unavailable);
      expect(await eventsOf(sender.clientId)).toEqual([]);
      await rows.delete({ id });
      expect(await t.app.get(WebhookSignatures).reload()).toEqual([]);
      await post(sender.write, text(attemptCompleted())).expect(200);
    });

    it('are logged when they appear, then every 10 minutes, not on every reload or refused delivery', () => {
      const signatures = t.app.get(WebhookSignatures);
      const logged = jest.spyOn(signatures['logger'], 'error').mockImplementation(() => undefined);
      const now = jest.spyOn(Date, 'now');
      try {
        const at = (ms: number) => now.mockReturnValue(1_800_000_000_000 + ms);
        const a = 'A secret cannot be decrypted (client a).';
        const b = 'A secret cannot be decrypted (client b).';
        at(0);
        signatures['report'](a);
        at(2_000);
        signatures['report'](a);
        expect(logged).toHaveBeenCalledTimes(1);
        // Another problem is news; then the two alternate (reloads, refused deliveries) unlogged.
        signatures['report'](b);
        expect(logged).toHaveBeenCalledTimes(2);
        at(4_000);
        signatures['report'](a);
        signatures['report'](b);
        expect(logged).toHaveBeenCalledTimes(2);
        // 10 minutes after its last line, a problem that lasts is logged again.
        at(10 * 60_000);
        signatures['report'](a);
        signatures['report'](b);
        expect(logged.mock.calls.map(([line]) => line)).toEqual([a, b, a]);
      } finally {
        now.mockRestore();
        logged.mockRestore();
      }
    });

    it('stop a server from starting without the key, or with another one', async () => {
      await secrets().create((await senderHeaders(t)).clientId);
      const start = async (key: string | undefined) =>
        runNode(
          'dist/src/main.js',
          [],
          { DATABASE_URL: t.database.url, PORT: String(await freePort()), WEBHOOK_SECRET_KEY: key },
          25000,
        );
      const missing = await start(undefined);
      expect(missing).toEqual({ code: 1, stdout: '', stderr: expect.any(String) });
      expect(missing.stderr).toMatch(
        /^Start-up failed \(database [^)]*\): WEBHOOK_SECRET_KEY is not set, but webhook signing secrets are stored: set it to the key they were created with \(client [0-9a-f-]{36}\)\.\n$/,
      );
      const other = await start(randomBytes(32).toString('hex'));
      expect(other.code).toBe(1);
      expect(other.stderr).toMatch(
        /: WEBHOOK_SECRET_KEY does not decrypt a stored webhook signing secret/,
      );
      expect(other.stderr).not.toContain(KEY);
    });
  });
});
