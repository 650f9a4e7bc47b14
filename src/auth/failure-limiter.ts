/**
 * Counts failed attempts per key (a client id, a username) in fixed one-minute windows that
 * start at the first failure. Successes are not counted: only guessing is throttled, so a busy
 * client with the right secret is never locked out. @nestjs/throttler counts every request a
 * guard sees, before the outcome is known, so it cannot express this.
 */
export class FailureLimiter {
  private readonly windows = new Map<string, { failures: number; resetAt: number }>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs = 60_000,
    // Keys are caller-chosen (any client id can be tried), so the map is bounded too.
    private readonly maxKeys = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until `key` may try again, or 0 when it may try now. */
  retryAfter(key: string): number {
    const window = this.windows.get(this.normalize(key));
    const now = this.now();
    if (!window || window.resetAt <= now || window.failures < this.maxFailures) return 0;
    return Math.max(1, Math.ceil((window.resetAt - now) / 1000));
  }

  recordFailure(key: string): void {
    const k = this.normalize(key);
    const now = this.now();
    const window = this.windows.get(k);
    if (window && window.resetAt > now) {
      window.failures++;
      return;
    }
    this.windows.delete(k);
    this.windows.set(k, { failures: 1, resetAt: now + this.windowMs });
    if (this.windows.size > this.maxKeys) this.evict(now);
  }

  private evict(now: number) {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
    // Still full of live windows: drop the oldest (Map order is insertion order).
    for (const key of this.windows.keys()) {
      if (this.windows.size <= this.maxKeys) break;
      this.windows.delete(key);
    }
  }

  private normalize(key: string) {
    return key.length > 256 ? key.slice(0, 256) : key;
  }
}
