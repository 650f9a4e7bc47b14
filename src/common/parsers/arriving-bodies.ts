import { Transform, type Readable } from 'node:stream';
import { ServiceUnavailableApiException } from '../exceptions/api.exception.js';
import { processMemory, type Release } from '../memory-budget.js';

/**
 * Bodies of this size or more (declared, or sent in chunks) are counted as they arrive; smaller
 * ones, the service's usual traffic, never pass through a counting stream.
 */
export const COUNTED_FROM_BYTES = 16 * 1024;

/**
 * The bytes of request bodies from their first byte until their answer is made: a body that
 * arrives slowly, or never ends, is held by the HTTP layer all the while (the memory budget
 * counts a body only once it is whole). Without a bound, 1,000 connections each sending 1 MiB
 * but the last byte held 1.2 GB of RSS until HTTP_REQUEST_TIMEOUT_MS cut them off. A chunk that
 * would go past the limit has its request refused at once (503, `Retry-After`), after what the
 * route decides before its body (a bad token is still 401), and its connection closed.
 */
export class ArrivingBodies {
  private used = 0;

  constructor(readonly limit: number) {}

  /**
   * `payload` as a stream whose chunks take room here as they pass, and what gives it all back.
   * Past the limit the stream fails with `refusal()`'s error (the route's own refusal, or a 503)
   * and the rest of the body is read and dropped, never held.
   */
  count(payload: Readable, refusal: () => Promise<Error>): { stream: Readable; release: Release } {
    let held = 0;
    let released = false;
    const release: Release = () => {
      this.used -= held;
      held = 0;
      released = true;
    };
    const stream = new Transform({
      transform: (chunk: Buffer, _encoding, callback) => {
        // Answered already (before its body, say): what still arrives is dropped by its reader.
        if (released) return callback(null, chunk);
        // The limit is far above the largest body (1 MiB): no single body is refused alone.
        if (this.used + chunk.length <= this.limit) {
          this.used += chunk.length;
          held += chunk.length;
          return callback(null, chunk);
        }
        payload.unpipe(stream);
        payload.resume();
        void refusal().then((error) => callback(error));
      },
    });
    payload.on('error', (error) => stream.destroy(error));
    payload.pipe(stream);
    return { stream, release };
  }

  /** Room held outside any body, until the release is called (tests fill the room with it). */
  reserve(bytes: number): Release {
    this.used += bytes;
    let released = false;
    return () => {
      if (!released) this.used -= bytes;
      released = true;
    };
  }

  /** Bytes held now (tests). */
  get held(): number {
    return this.used;
  }
}

/** The process's room for arriving bodies: a quarter of its memory budget, 32 MiB at least. */
export const arrivingBodies = new ArrivingBodies(
  Math.max(32 * 2 ** 20, Math.floor(processMemory.limit / 4)),
);

/** The refusal of a body that finds no room as it arrives. */
export function noRoomToArrive(): Error {
  return new ServiceUnavailableApiException(
    'Too many large request bodies are arriving right now; try again shortly.',
  );
}
