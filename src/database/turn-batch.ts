import { isDatabaseUnavailable } from '../common/exceptions/database-errors.js';
import type { FlightBound } from './flight-bound.js';

/** What one item of a batch came to: its value, or its own error. */
export type Outcome<T> = { value: T } | { error: unknown };

/** The outcome `promise` settles to. */
export function outcomeOf<T>(promise: Promise<T>): Promise<Outcome<T>> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

/**
 * The outcomes of a batch's `items` after the batch failed with `error`: each again alone, so
 * that only a failing one fails (`inOrder`: one after the other, for items whose order decides
 * which one wins). Not when the database does not answer: each alone would wait out its timeout
 * again, past the contract's 503 within 5 s, so every item fails with the batch's error.
 */
export async function eachAlone<I, T>(
  items: readonly I[],
  error: unknown,
  alone: (item: I) => Promise<T>,
  { inOrder = false }: { inOrder?: boolean } = {},
): Promise<Outcome<T>[]> {
  if (isDatabaseUnavailable(error)) return items.map(() => ({ error }));
  if (!inOrder) return Promise.all(items.map((item) => outcomeOf(alone(item))));
  const outcomes: Outcome<T>[] = [];
  for (const item of items) outcomes.push(await outcomeOf(alone(item)));
  return outcomes;
}

interface Pending<I, T> {
  items: I[];
  answers: { resolve: (value: T) => void; reject: (error: unknown) => void }[];
}

/**
 * Batching by turn of the event loop: items submitted in the same turn (concurrent requests) go
 * to `run` together, once, after that turn (up to `maxSize` a batch). Each caller gets its own
 * item's outcome; if `run` throws, every caller of the batch gets that error. Used for shared
 * commits (Database.execute() on SQLite, groupedTransaction() on both databases) and for
 * batchedWrites() (insert-with-dependents.ts).
 *
 * With a `bound`, a batch that finds it full waits for a place, and items submitted meanwhile
 * join it (up to `maxSize`): fewer, larger batches while the database is busy.
 */
export class TurnBatcher<I, T> {
  private pending?: Pending<I, T>;

  constructor(
    private readonly maxSize: number,
    private readonly run: (items: I[]) => Promise<Outcome<T>[]>,
    private readonly bound?: FlightBound,
  ) {}

  submit(item: I): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let batch = this.pending;
      if (!batch || batch.items.length >= this.maxSize) {
        const started: Pending<I, T> = (batch = { items: [], answers: [] });
        this.pending = started;
        const send = () => {
          if (this.pending === started) this.pending = undefined;
          const out = this.bound
            ? this.bound.out(() => this.run(started.items))
            : this.run(started.items);
          out.then(
            (outcomes) =>
              outcomes.forEach((outcome, i) => {
                if ('error' in outcome) started.answers[i].reject(outcome.error);
                else started.answers[i].resolve(outcome.value);
              }),
            (error: unknown) => started.answers.forEach((answer) => answer.reject(error)),
          );
        };
        setImmediate(() => (this.bound ? this.bound.whenFree(send) : send()));
      }
      batch.items.push(item);
      batch.answers.push({ resolve, reject });
    });
  }
}
