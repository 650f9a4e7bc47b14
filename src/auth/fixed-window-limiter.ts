/**
 * Counts events per key (a client id's failed attempts, an address's requests) in fixed
 * one-minute windows that start at the key's first event; past `max` events the key is refused
 * until its window ends. In memory, per instance.
 *
 * Why not @nestjs/throttler: it counts every request a guard sees, before the outcome is known, so
 * it cannot count failures only; and it is CommonJS requiring the ESM-only @nestjs/common, which
 * jest's ESM loader cannot do on Node 20 (Node itself can).
 */
export class FixedWindowLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly max: number,
    private readonly windowMs = 60_000,
    // Keys are caller-chosen (any client id can be tried), so the map is bounded too.
    private readonly maxKeys = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until `key` may go on, or 0 when it may go on now. */
  retryAfter(key: string): number {
    const window = this.windows.get(this.normalize(key));
    const now = this.now();
    if (!window || window.resetAt <= now || window.count < this.max) return 0;
    return Math.max(1, Math.ceil((window.resetAt - now) / 1000));
  }

  record(key: string): void {
    const k = this.normalize(key);
    const now = this.now();
    const window = this.windows.get(k);
    if (window && window.resetAt > now) {
      window.count++;
      return;
    }
    this.windows.delete(k);
    this.windows.set(k, { count: 1, resetAt: now + this.windowMs });
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
