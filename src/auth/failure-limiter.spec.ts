import { FailureLimiter } from './failure-limiter.js';

describe('FailureLimiter', () => {
  let now: number;
  const limiter = (max = 3, keys = 100) => new FailureLimiter(max, 60_000, keys, () => now);
  beforeEach(() => {
    now = 1_000_000;
  });

  it('allows up to the limit of failures in a minute, then refuses until the window ends', () => {
    const l = limiter(3);
    for (let i = 0; i < 3; i++) {
      expect(l.retryAfter('client-a')).toBe(0);
      l.recordFailure('client-a');
    }
    expect(l.retryAfter('client-a')).toBe(60);
    now += 45_500;
    expect(l.retryAfter('client-a')).toBe(15);
    now += 14_500;
    expect(l.retryAfter('client-a')).toBe(0);
  });

  it('keeps keys apart', () => {
    const l = limiter(1);
    l.recordFailure('a');
    expect(l.retryAfter('a')).toBeGreaterThan(0);
    expect(l.retryAfter('b')).toBe(0);
  });

  it('starts a fresh window once the old one has ended', () => {
    const l = limiter(2);
    l.recordFailure('a');
    now += 61_000;
    l.recordFailure('a');
    expect(l.retryAfter('a')).toBe(0);
    l.recordFailure('a');
    expect(l.retryAfter('a')).toBe(60);
  });

  it('stays bounded when many distinct keys fail', () => {
    const l = limiter(1, 10);
    for (let i = 0; i < 50; i++) l.recordFailure(`k${i}`);
    expect((l as unknown as { windows: Map<string, unknown> }).windows.size).toBeLessThanOrEqual(
      10,
    );
    expect(l.retryAfter('k49')).toBeGreaterThan(0);
  });
});
