/**
 * How long batches wait for one out to answer before they go anyway. A batch answers in well
 * under a millisecond on a healthy database; one that has not answered in this time is stalled,
 * and waiting on it would add its statement timeout to the batches behind it (the contract's 503
 * within 5 s).
 */
export const FLIGHT_WAIT_MS = 50;

/**
 * A bound on the batches of statements out at once: while `max` are out, the next waits (and,
 * in its batcher, keeps gathering items) until one answers. Fewer, larger statements keep fewer
 * PostgreSQL backends busy, which on a machine shared with the database costs less than many
 * small ones (docs/benchmarks.md, thirteenth and fifteenth sessions). When none of those out has
 * answered for `waitMs`, the database is stalled, the bound buys nothing, and every waiting
 * batch goes.
 */
export class FlightBound {
  private inFlight = 0;
  /** Sends of batches waiting for a place, oldest first. */
  private readonly waiting: (() => void)[] = [];
  /** Sends every waiting batch when none of those out has answered for waitMs. */
  private overdue?: NodeJS.Timeout;

  constructor(
    private readonly max: number,
    private readonly waitMs = FLIGHT_WAIT_MS,
  ) {}

  /** Calls `send` now if fewer than `max` batches are out, else when a place frees (or waitMs). */
  whenFree(send: () => void): void {
    if (this.inFlight < this.max) return send();
    this.waiting.push(send);
    if (this.waiting.length === 1) this.watch();
  }

  /** Runs `batch`, counted as out until it settles. */
  async out<T>(batch: () => Promise<T>): Promise<T> {
    this.inFlight++;
    try {
      return await batch();
    } finally {
      this.inFlight--;
      this.waiting.shift()?.();
      if (this.waiting.length > 0) this.watch();
    }
  }

  /**
   * (Re)starts the wait: waitMs from now, unless a batch answers first. One timer, re-armed
   * rather than replaced, since under load batches start waiting many times a second (a new
   * timer each time measured slower, docs/benchmarks.md). When it fires with nothing waiting, it does
   * nothing.
   */
  private watch(): void {
    if (this.overdue) this.overdue.refresh();
    else this.overdue = setTimeout(() => this.sendAllWaiting(), this.waitMs).unref();
  }

  private sendAllWaiting(): void {
    for (const send of this.waiting.splice(0)) send();
  }
}
