import { Injectable } from '@nestjs/common';
import { getHeapStatistics } from 'node:v8';
import { ServiceUnavailableApiException } from '../common/exceptions/api.exception.js';

/** Gives back what acquire() took (once; later calls do nothing). */
export type Release = () => void;

/**
 * How much stored payload text the process holds for answers at once. A page of 100 events may
 * carry 100 MiB of payloads (contract §6 keeps up to 1 MiB each), and an answer holds about five
 * bytes for each of their characters until it is sent (the database driver's buffer, the rows, the
 * body, the socket's buffer: 500 MB of RSS for such a page, measured). Pages wait
 * in turn for room; one that waits longer than WAIT_MS is answered 503 with Retry-After, so that
 * many large pages at once slow each other down instead of exhausting the heap. A page larger
 * than the whole budget is served when it is alone.
 */
@Injectable()
export class PayloadMemory {
  /** Characters of payload in answers not yet sent: a quarter of the heap at 6 bytes each. */
  readonly limit = Math.max(2 ** 20, Math.floor(getHeapStatistics().heap_size_limit / 24));
  private used = 0;
  private readonly waiting: { chars: number; grant: () => void }[] = [];

  static readonly WAIT_MS = 10_000;

  /** Room for `chars` characters of payload: resolves when there is, refuses past WAIT_MS. */
  acquire(chars: number): Promise<Release> {
    if (this.waiting.length === 0 && this.fits(chars)) return Promise.resolve(this.take(chars));
    return new Promise((resolve, reject) => {
      const waiter = {
        chars,
        grant: () => {
          clearTimeout(timer);
          resolve(this.take(chars));
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        // The next in line may fit now that this one no longer goes first.
        this.grantWaiting();
        reject(
          new ServiceUnavailableApiException(
            'Too many large webhook answers are being sent right now; try again shortly.',
          ),
        );
      }, PayloadMemory.WAIT_MS);
      this.waiting.push(waiter);
    });
  }

  /** Characters currently held (tests, metrics). */
  get held(): number {
    return this.used;
  }

  private fits(chars: number): boolean {
    return this.used === 0 || this.used + chars <= this.limit;
  }

  private take(chars: number): Release {
    this.used += chars;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= chars;
      this.grantWaiting();
    };
  }

  /** First come, first served: a large page at the head is not overtaken for ever by small ones. */
  private grantWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0].chars)) {
      this.waiting.shift()!.grant();
    }
  }
}
