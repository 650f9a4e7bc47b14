import type { RegisteredWebhook } from './webhook-registry.js';
import { dedupeKeyOf } from './webhook-processor.js';

describe('dedupeKeyOf', () => {
  const webhook = (dedupeKey: (payload: any) => string | number) =>
    ({ handlerName: 'TestHandler', dedupeKey }) as unknown as RegisteredWebhook;
  const byId = webhook((payload) => payload.id);

  it("uses the event's natural key when the sender sent none", () => {
    expect(dedupeKeyOf(byId, { id: 42 }, { clientId: 'lms' })).toBe('natural:42');
  });

  it("prefers the sender's key, scoped to the sending client", () => {
    expect(dedupeKeyOf(byId, { id: 42 }, { clientId: 'lms', senderKey: 'msg_1' })).toBe(
      'sender:lms:msg_1',
    );
    expect(dedupeKeyOf(byId, { id: 42 }, { clientId: 'crm', senderKey: 'msg_1' })).not.toBe(
      dedupeKeyOf(byId, { id: 42 }, { clientId: 'lms', senderKey: 'msg_1' }),
    );
  });

  it('hashes a key too long for the column, keeping it stable', () => {
    const long = 'k'.repeat(300);
    const key = dedupeKeyOf(byId, {}, { clientId: 'lms', senderKey: long });
    expect(key).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(dedupeKeyOf(byId, {}, { clientId: 'lms', senderKey: long })).toBe(key);
  });

  it('refuses a handler whose natural key comes out empty', () => {
    expect(() => dedupeKeyOf(byId, {}, { clientId: 'lms' })).toThrow(/TestHandler/);
    expect(() =>
      dedupeKeyOf(
        webhook(() => ''),
        {},
        { clientId: 'lms' },
      ),
    ).toThrow();
  });
});
