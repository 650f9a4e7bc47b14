import DataLoader from 'dataloader';

/**
 * The most batches of keyed reads out at once, across every loader of one Database. Measured on
 * PostgreSQL (BENCHMARKS.md, thirteenth session): 1, 2 and 4 gave the same +17–20 % on GET
 * company over no bound; 4 keeps one slow read from holding up all the others.
 */
export const READ_BATCHES_IN_FLIGHT = 4;

/**
 * How long reads wait for a batch out to answer before they go anyway. A batch answers in well
 * under a millisecond on a healthy database; one that has not answered in this time is stalled,
 * and waiting on it would add its statement timeout to the reads behind it (the contract's 503
 * within 5 s).
 */
export const READ_WAIT_MS = 50;

/**
 * Keyed reads that arrive in the same turn of the event loop (concurrent requests) go to the
 * database as one batch: one statement instead of one each. There is no cache: each read is
 * issued after its request arrived, so it sees every write answered before that.
 *
 * While READ_BATCHES_IN_FLIGHT batches are out, later reads wait and gather into the next batch,
 * sent as soon as one answers (or after READ_WAIT_MS). Fewer, larger statements keep fewer
 * PostgreSQL backends busy, which on a machine shared with the database costs less than many
 * small ones. SQLite answers a batch before the next turn, so the bound never holds its reads
 * back.
 */
export class ReadBatches {
  private inFlight = 0;
  /** Dispatches of batches waiting for a place, oldest first. */
  private readonly waiting: (() => void)[] = [];
  /** Sends every waiting batch when none of those out has answered for READ_WAIT_MS. */
  private overdue?: NodeJS.Timeout;

  constructor(
    private readonly maxInFlight = READ_BATCHES_IN_FLIGHT,
    private readonly waitMs = READ_WAIT_MS,
  ) {}

  /**
   * A read of one key, batched with concurrent ones: `load` gets the keys of a batch (at most
   * `maxBatchSize`) and answers one value per key, in their order.
   */
  loader<K, V>(
    load: (keys: readonly K[]) => Promise<V[]>,
    maxBatchSize: number,
  ): (key: K) => Promise<V> {
    const batches = new DataLoader<K, V>(
      async (keys) => {
        this.inFlight++;
        try {
          return await load(keys);
        } finally {
          this.inFlight--;
          this.answered();
        }
      },
      {
        cache: false,
        maxBatchSize,
        batchScheduleFn: (dispatch) =>
          setImmediate(() => {
            if (this.inFlight < this.maxInFlight) return dispatch();
            this.waiting.push(dispatch);
            if (this.waiting.length === 1) this.watch();
          }),
      },
    );
    return (key) => batches.load(key);
  }

  /** A batch out answered: the oldest waiting one takes its place. */
  private answered(): void {
    this.waiting.shift()?.();
    if (this.waiting.length > 0) this.watch();
  }

  /**
   * (Re)starts the wait: READ_WAIT_MS from now, unless a batch answers first. One timer, re-armed
   * rather than replaced, since under load reads start waiting many times a second (a new timer
   * each time measured slower, BENCHMARKS.md). When it fires with nothing waiting, it does nothing.
   */
  private watch(): void {
    if (this.overdue) this.overdue.refresh();
    else this.overdue = setTimeout(() => this.sendAllWaiting(), this.waitMs).unref();
  }

  /** No batch out answered for READ_WAIT_MS: the database is stalled, the bound buys nothing. */
  private sendAllWaiting(): void {
    for (const dispatch of this.waiting.splice(0)) dispatch();
  }
}
