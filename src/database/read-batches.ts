import DataLoader from 'dataloader';

/**
 * The most batches of keyed reads out at once, across every loader of one Database. Measured on
 * PostgreSQL (BENCHMARKS.md, thirteenth session): 1, 2 and 4 gave the same +17–19 % on GET
 * company over no bound; 4 keeps one slow read from holding up all the others.
 */
export const READ_BATCHES_IN_FLIGHT = 4;

/**
 * Keyed reads that arrive in the same turn of the event loop (concurrent requests) go to the
 * database as one batch: one statement instead of one each. There is no cache: each read is
 * issued after its request arrived, so it sees every write answered before that.
 *
 * While READ_BATCHES_IN_FLIGHT batches are out, later reads wait and gather into the next batch,
 * sent as soon as one answers. Fewer, larger statements keep fewer PostgreSQL backends busy,
 * which on a machine shared with the database costs less than many small ones. SQLite answers a
 * batch before the next turn, so the bound never holds its reads back.
 */
export class ReadBatches {
  private inFlight = 0;
  /** Dispatches of batches waiting for a slot, oldest first. */
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly maxInFlight = READ_BATCHES_IN_FLIGHT) {}

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
          this.waiting.shift()?.();
        }
      },
      {
        cache: false,
        maxBatchSize,
        batchScheduleFn: (dispatch) =>
          setImmediate(() => {
            if (this.inFlight < this.maxInFlight) dispatch();
            else this.waiting.push(dispatch);
          }),
      },
    );
    return (key) => batches.load(key);
  }
}
