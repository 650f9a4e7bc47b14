/** What one item of a batch came to: its value, or its own error. */
export type Outcome<T> = { value: T } | { error: unknown };

interface Pending<I, T> {
  items: I[];
  answers: { resolve: (value: T) => void; reject: (error: unknown) => void }[];
}

/**
 * Batching by turn of the event loop: items submitted in the same turn (concurrent requests) go
 * to `run` together, once, after that turn (up to `maxSize` a batch). Each caller gets its own
 * item's outcome; if `run` throws, every caller of the batch gets that error. Used for the shared
 * commit of single statements on SQLite (Database.execute()).
 */
export class TurnBatcher<I, T> {
  private pending?: Pending<I, T>;

  constructor(
    private readonly maxSize: number,
    private readonly run: (items: I[]) => Promise<Outcome<T>[]>,
  ) {}

  submit(item: I): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let batch = this.pending;
      if (!batch || batch.items.length >= this.maxSize) {
        const started: Pending<I, T> = (batch = { items: [], answers: [] });
        this.pending = started;
        const send = () => {
          if (this.pending === started) this.pending = undefined;
          this.run(started.items).then(
            (outcomes) =>
              outcomes.forEach((outcome, i) => {
                if ('error' in outcome) started.answers[i].reject(outcome.error);
                else started.answers[i].resolve(outcome.value);
              }),
            (error: unknown) => started.answers.forEach((answer) => answer.reject(error)),
          );
        };
        setImmediate(send);
      }
      batch.items.push(item);
      batch.answers.push({ resolve, reject });
    });
  }
}
