import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { getHeapStatistics } from 'node:v8';
import { ServiceUnavailableApiException } from './exceptions/api.exception.js';

/** Gives back what acquire() took (once; later calls do nothing). */
export type Release = () => void;

/**
 * Memory for the work whose size a caller chooses: large request bodies while they are parsed and
 * handled (bootstrap), large webhook pages while they are sent (WebhooksService). Each takes room
 * for what it will hold before it holds it, and gives it back once done with it: a body when its
 * answer is made, a page when it has left (or its client has gone). Work that
 * does not fit waits in turn (first come, first served), and past WAIT_MS is refused with 503 and
 * `Retry-After`: many large requests at once slow each other down instead of exhausting the heap.
 * A single piece of work larger than the whole budget runs when it is alone.
 */
export class MemoryBudget {
  static readonly WAIT_MS = 10_000;

  /**
   * Work that needs less is not counted (1.5 MiB: a body of 64 KiB, parsed): small requests, the
   * service's usual traffic, never wait on a promise for room.
   */
  static readonly COUNTED_BYTES = 1.5 * 2 ** 20;

  private used = 0;
  private readonly waiting: { bytes: number; grant: () => void }[] = [];

  constructor(readonly limit: number) {}

  /**
   * Room for `bytes`: resolves when there is, refuses with a 503 past WAIT_MS, or with the
   * signal's reason once `cancelled` is aborted (its client has gone: no reason to wait on).
   */
  acquire(bytes: number, cancelled?: AbortSignal): Promise<Release> {
    if (cancelled?.aborted) return Promise.reject(cancelled.reason as Error);
    if (this.waiting.length === 0 && this.fits(bytes)) return Promise.resolve(this.take(bytes));
    return new Promise((resolve, reject) => {
      const waiter = {
        bytes,
        grant: () => {
          clearTimeout(timer);
          cancelled?.removeEventListener('abort', cancel);
          resolve(this.take(bytes));
        },
      };
      const giveUp = (reason: unknown) => {
        clearTimeout(timer);
        cancelled?.removeEventListener('abort', cancel);
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        // The next in line may fit now that this one no longer goes first.
        this.grantWaiting();
        reject(reason);
      };
      const cancel = () => giveUp(cancelled!.reason);
      const timer = setTimeout(
        () =>
          giveUp(
            new ServiceUnavailableApiException(
              'Too many large requests are being handled right now; try again shortly.',
            ),
          ),
        MemoryBudget.WAIT_MS,
      );
      this.waiting.push(waiter);
      cancelled?.addEventListener('abort', cancel, { once: true });
    });
  }

  /**
   * Room for `bytes` at once, if it fits and nobody waits for room: its release; otherwise
   * undefined, and nothing waits (bytes already arriving cannot).
   */
  tryAcquire(bytes: number): Release | undefined {
    return this.waiting.length === 0 && this.fits(bytes) ? this.take(bytes) : undefined;
  }

  /** Whether work needing `bytes` takes room here (acquire()) or runs uncounted. */
  counts(bytes: number): boolean {
    return bytes >= MemoryBudget.COUNTED_BYTES;
  }

  /** Bytes currently held (tests). */
  get held(): number {
    return this.used;
  }

  private fits(bytes: number): boolean {
    return this.used === 0 || this.used + bytes <= this.limit;
  }

  private take(bytes: number): Release {
    this.used += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= bytes;
      this.grantWaiting();
    };
  }

  /** A large piece of work at the head is not overtaken for ever by small ones. */
  private grantWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0].bytes)) {
      this.waiting.shift()!.grant();
    }
  }
}

/**
 * The process's budget: a quarter of the heap. One per process, shared by the HTTP layer's hooks
 * (outside Nest's injector) and the services.
 */
export const processMemory = new MemoryBudget(
  Math.max(16 * 2 ** 20, Math.floor(getHeapStatistics().heap_size_limit / 4)),
);

/** What uncounted work gives back: nothing. */
export const nothingHeld: Release = () => {};

/** Releases waiting on a connection's close, one listener per connection (see below). */
const heldBySocket = new WeakMap<Socket, Set<Release>>();

/**
 * Calls `release` once, when the answer to this response has left or its connection has closed.
 * The connection is watched too: a pipelined request whose answer is still queued behind another
 * gets no `close` of its own when the client goes away. One listener per connection, however
 * many of its requests hold room (a listener each would trip Node's MaxListeners warning).
 */
export function releaseWhenAnswered(response: ServerResponse, release: Release): void {
  const socket = response.req.socket;
  if (response.closed || socket.destroyed) return release();
  let held = heldBySocket.get(socket);
  if (held === undefined) {
    const releases = new Set<Release>();
    heldBySocket.set(socket, releases);
    socket.once('close', () => {
      for (const each of releases) each();
      releases.clear();
    });
    held = releases;
  }
  const releases = held;
  releases.add(release);
  response.once('close', () => {
    // Once: the connection's close may have called it already.
    if (releases.delete(release)) release();
  });
}
