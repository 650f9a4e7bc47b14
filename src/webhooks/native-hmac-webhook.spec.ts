import { randomBytes } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { NativeHmacWebhook } from './native-hmac-webhook.js';

describe('NativeHmacWebhook: standardwebhooks with the HMAC done by Node', () => {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const library = new Webhook(secret);
  const native = new NativeHmacWebhook(secret);
  const body = JSON.stringify({ event: 'learning.attempt.completed', payload: { note: 'é ✓ 😀' } });
  const headersFor = (
    signer: Webhook,
    payload: string | Buffer,
    id = 'msg_1',
    at = new Date(),
  ) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signer.sign(id, at, payload),
  });

  it("signs exactly as the package's own signer, for a string and for the same bytes", () => {
    const at = new Date(1_700_000_000_123);
    expect(native.sign('msg_1', at, body)).toBe(library.sign('msg_1', at, body));
    expect(native.sign('msg_1', at, Buffer.from(body))).toBe(library.sign('msg_1', at, body));
    expect(native.sign('msg_1', at, '')).toBe(library.sign('msg_1', at, ''));
  });

  it("accepts what the package's signer signed, over the bytes as received", () => {
    const headers = headersFor(library, body);
    expect(native.verify(Buffer.from(body), headers, { jsonParse: false })).toBeUndefined();
    expect(native.verify(body, headers, { jsonParse: false })).toBeUndefined();
  });

  it('refuses a tampered body, id or timestamp, another secret and a stale timestamp', () => {
    const headers = headersFor(library, body);
    const refused = (payload: string | Buffer, h: Record<string, string>) => () =>
      native.verify(payload, h, { jsonParse: false });
    expect(refused(Buffer.from(body.replace('completed', 'completeD')), headers)).toThrow(
      WebhookVerificationError,
    );
    expect(refused(body, { ...headers, 'webhook-id': 'msg_2' })).toThrow(
      'No matching signature found',
    );
    const later = String(Number(headers['webhook-timestamp']) + 1);
    expect(refused(body, { ...headers, 'webhook-timestamp': later })).toThrow(
      'No matching signature found',
    );
    const other = new Webhook(`whsec_${randomBytes(32).toString('base64')}`);
    expect(refused(body, headersFor(other, body))).toThrow('No matching signature found');
    const old = new Date(Date.now() - 6 * 60 * 1000);
    expect(refused(body, headersFor(library, body, 'msg_1', old))).toThrow(
      'Message timestamp too old',
    );
  });

  it('accepts a list of signatures when one of them matches', () => {
    const headers = headersFor(library, body);
    const wrong = `v1,${randomBytes(32).toString('base64')}`;
    const list = { ...headers, 'webhook-signature': `${wrong} ${headers['webhook-signature']}` };
    expect(native.verify(body, list, { jsonParse: false })).toBeUndefined();
  });
});
