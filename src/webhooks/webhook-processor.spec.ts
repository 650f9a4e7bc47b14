import type { RegisteredWebhook } from './webhook-registry.js';
import { dedupeKeyOf } from './webhook-processor.js';

/** Keys are unique per sending client (the client id is a column of its own, beside the key). */
describe('dedupeKeyOf', () => {
  const webhook = (dedupeKey: (payload: any) => string | number) =>
    ({ handlerName: 'TestHandler', dedupeKey }) as unknown as RegisteredWebhook;
  const byId = webhook((payload) => payload.id);

  it("uses the event's natural key when the sender sent none", () => {
    expect(dedupeKeyOf(byId, { id: 42 }, undefined)).toBe('natural:42');
  });

  it("prefers the sender's key", () => {
    expect(dedupeKeyOf(byId, { id: 42 }, 'msg_1')).toBe('sender:msg_1');
  });

  it('hashes a key too long for the column, keeping it stable', () => {
    const long = 'k'.repeat(300);
    const key = dedupeKeyOf(byId, {}, long);
    expect(key).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(dedupeKeyOf(byId, {}, long)).toBe(key);
  });

  it('refuses a handler whose natural key comes out empty', () => {
    expect(() => dedupeKeyOf(byId, {}, undefined)).toThrow(/TestHandler/);
    expect(() =>
      dedupeKeyOf(
        webhook(() => ''),
        {},
        undefined,
      ),
    ).toThrow();
  });
});
