import { Transform, type Readable } from 'node:stream';
import { ServiceUnavailableApiException } from '../exceptions/api.exception.js';
import { MemoryBudget, processMemory, type Release } from '../memory-budget.js';

/**
 * Bodies of this size or more (declared, or sent in chunks) are counted as they arrive; smaller
 * ones, the service's usual traffic, never pass through a counting stream.
 */
export const COUNTED_FROM_BYTES = 16 * 1024;

/**
 * Room for the bytes of request bodies from their first byte until their answer is made: a body
 * that arrives slowly, or never ends, is held by the HTTP layer all the while (processMemory
 * counts a body only once it is whole). Without a bound, 1,000 connections each sending 1 MiB
 * but the last byte held 1.2 GB of RSS until HTTP_REQUEST_TIMEOUT_MS cut them off. A quarter of
 * processMemory's room, 32 MiB at least: far above the largest body (1 MiB).
 */
export const arrivingBodies = new MemoryBudget(
  Math.max(32 * 2 ** 20, Math.floor(processMemory.limit / 4)),
);

/**
 * `payload` as a stream whose chunks take room in `arrivingBodies` as they pass, and what gives
 * it all back. A chunk that finds none fails the stream with `refusal()`'s error (the route's own
 * refusal, or noRoomToArrive()), and the rest of the body is read and dropped, never held.
 */
export function countArriving(
  payload: Readable,
  refusal: () => Promise<Error>,
): { stream: Readable; release: Release } {
  const held: Release[] = [];
  let released = false;
  const release: Release = () => {
    released = true;
    for (const each of held.splice(0)) each();
  };
  const stream = new Transform({
    transform: (chunk: Buffer, _encoding, callback) => {
      // Answered already (before its body, say): what still arrives is dropped by its reader.
      if (released) return callback(null, chunk);
      const room = arrivingBodies.tryAcquire(chunk.length);
      if (room) {
        held.push(room);
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

/** The refusal of a body that finds no room as it arrives. */
export function noRoomToArrive(): Error {
  return new ServiceUnavailableApiException(
    'Too many large request bodies are arriving right now; try again shortly.',
  );
}
