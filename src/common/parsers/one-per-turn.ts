/** Work waiting for its turn, oldest first. */
const waiting: (() => void)[] = [];

/**
 * Runs `work` in a later turn of the event loop, one piece per turn, in order. A large body's
 * parse is such work (1 MiB of `[{},{},…]` takes 0.1–0.4 s): run as each body's room was granted,
 * a burst of them held the loop for seconds, and every other request waited behind them (100
 * such PUTs: a GET /health took up to 10.7 s); one per turn, the I/O that arrived meanwhile
 * (other requests, other bodies' bytes) is handled between two of them.
 */
export function onePerTurn(work: () => void): void {
  waiting.push(work);
  if (waiting.length === 1) setImmediate(runNext);
}

function runNext(): void {
  try {
    waiting[0]();
  } finally {
    waiting.shift();
    if (waiting.length > 0) setImmediate(runNext);
  }
}
