import DataLoader from 'dataloader';
import { FLIGHT_WAIT_MS, FlightBound } from './flight-bound.js';

/**
 * The most batches of keyed reads out at once, across every loader of one Database. Measured on
 * PostgreSQL (docs/benchmarks.md, thirteenth session): 1, 2 and 4 gave the same +17–20 % on GET
 * company over no bound; 4 keeps one slow read from holding up all the others.
 */
export const READ_BATCHES_IN_FLIGHT = 4;

/** How long reads wait for a batch out to answer before they go anyway (a stalled database). */
export const READ_WAIT_MS = FLIGHT_WAIT_MS;

/**
 * Keyed reads that arrive in the same turn of the event loop (concurrent requests) go to the
 * database as one batch: one statement instead of one each. There is no cache: each read is
 * issued after its request arrived, so it sees every write answered before that.
 *
 * While READ_BATCHES_IN_FLIGHT batches are out, later reads wait and gather into the next batch
 * (FlightBound). SQLite answers a batch before the next turn, so the bound never holds its reads
 * back.
 */
export class ReadBatches {
  private readonly bound: FlightBound;

  constructor(maxInFlight = READ_BATCHES_IN_FLIGHT, waitMs = READ_WAIT_MS) {
    this.bound = new FlightBound(maxInFlight, waitMs);
  }

  /**
   * A read of one key, batched with concurrent ones: `load` gets the keys of a batch (at most
   * `maxBatchSize`) and answers one value per key, in their order.
   */
  loader<K, V>(
    load: (keys: readonly K[]) => Promise<V[]>,
    maxBatchSize: number,
  ): (key: K) => Promise<V> {
    const batches = new DataLoader<K, V>((keys) => this.bound.out(() => load(keys)), {
      cache: false,
      maxBatchSize,
      batchScheduleFn: (dispatch) => setImmediate(() => this.bound.whenFree(dispatch)),
    });
    return (key) => batches.load(key);
  }
}
