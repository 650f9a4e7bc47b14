import { FixedWindowLimiter } from './fixed-window-limiter.js';

describe('FixedWindowLimiter', () => {
  let now: number;
  const limiter = (max = 3, keys = 100) => new FixedWindowLimiter(max, 60_000, keys, () => now);
  beforeEach(() => {
    now = 1_000_000;
  });

  it('allows up to the limit in a minute, then refuses until the window ends', () => {
    const l = limiter(3);
    for (let i = 0; i < 3; i++) {
      expect(l.retryAfter('client-a')).toBe(0);
      l.record('client-a');
    }
    expect(l.retryAfter('client-a')).toBe(60);
    now += 45_500;
    expect(l.retryAfter('client-a')).toBe(15);
    now += 14_500;
    expect(l.retryAfter('client-a')).toBe(0);
  });

  it('keeps keys apart', () => {
    const l = limiter(1);
    l.record('a');
    expect(l.retryAfter('a')).toBeGreaterThan(0);
    expect(l.retryAfter('b')).toBe(0);
  });

  it('starts a fresh window once the old one has ended', () => {
    const l = limiter(2);
    l.record('a');
    now += 61_000;
    l.record('a');
    expect(l.retryAfter('a')).toBe(0);
    l.record('a');
    expect(l.retryAfter('a')).toBe(60);
  });

  it('stays bounded when many distinct keys are recorded', () => {
    const l = limiter(1, 10);
    for (let i = 0; i < 50; i++) l.record(`k${i}`);
    expect((l as unknown as { windows: Map<string, unknown> }).windows.size).toBeLessThanOrEqual(
      10,
    );
    expect(l.retryAfter('k49')).toBeGreaterThan(0);
  });

  it('treats very long keys by their first 256 characters', () => {
    const l = limiter(1);
    l.record(`${'x'.repeat(256)}a`);
    expect(l.retryAfter(`${'x'.repeat(256)}b`)).toBeGreaterThan(0);
  });
});
