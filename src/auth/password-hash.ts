import { randomBytes, ScryptOptions, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

// scrypt's recommended interactive cost (N=2^14, r=8, p=1): about 50 ms and 16 MiB a hash.
const COST = { N: 16384, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
const MAX_MEMORY = 64 * 1024 * 1024;
/** A thread idle this long ends (its 16 MiB block with it); the next hash starts a new one. */
const IDLE_MS = 5000;

/**
 * scrypt runs on dedicated worker threads, one hash at a time each, (cores − 1) of them: never on
 * the event loop's thread, never more at once than leaves a core to the event loop, and with
 * memory bounded (each thread keeps one 16 MiB block; on libuv's shared pool every pool thread
 * that ever ran a hash kept its own). Plain JavaScript, evaluated, so that it runs the same from
 * dist/ and under the test runner.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
parentPort.on('message', ({ password, salt, keyLength, options }) => {
  try {
    parentPort.postMessage({ key: scryptSync(password, Buffer.from(salt), keyLength, options) });
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message ? error.message : error) });
  }
});
`;

/** Who asks for a password check: the caller's address and the username it names. */
export interface HashRequester {
  address: string;
  username: string;
}

/**
 * A password check refused at once because hashing is saturated (`saturated`: 503) or because
 * this address or username already has its share of the queue (`share`: 429). Either way the
 * caller may retry after `retryAfterSeconds`.
 */
export class PasswordHashingBusyError extends Error {
  constructor(
    readonly reason: 'saturated' | 'share',
    readonly retryAfterSeconds: number,
  ) {
    super(`password hashing is busy (${reason})`);
  }
}

/**
 * How long a password check may wait for a hashing thread: what is left of 5 s (the bound
 * docs/contract.md §2 sets on an answer that waits for the database) once reading the user and
 * answering are counted.
 */
const WAIT_BUDGET_MS = 4000;
/** One username's checks waiting at once, from every address together. */
const MAX_QUEUED_PER_USERNAME = 4;
/** First guess of a hash's time, until one is measured (then a moving average). */
const FIRST_HASH_MS_GUESS = 100;
/** The lane of hashes nobody outside asked for (users:create, the unknown-user stand-in). */
const LOCAL = '';

interface Job {
  password: string;
  salt: Buffer;
  options: ScryptOptions;
  requester?: HashRequester;
  queuedAt: number;
  resolve: (key: Buffer) => void;
  reject: (error: Error) => void;
}

/**
 * Jobs wait in one lane per address, served in turn (round robin), so that an address flooding
 * the hashing threads delays another address's check by at most one hash per busy address, not
 * by its whole flood. A check is admitted only if, in that order, it would start within
 * WAIT_BUDGET_MS at the hash time measured lately; else it is refused at once (429 when its own
 * address already has checks waiting, 503 when many addresses do). One username may have
 * MAX_QUEUED_PER_USERNAME checks waiting, whichever addresses they come from.
 */
class ScryptThreads {
  private readonly idle: Worker[] = [];
  /** Waiting jobs by lane (address); the Map's order is the turn order. */
  private readonly lanes = new Map<string, Job[]>();
  private readonly queuedByUsername = new Map<string, number>();
  private readonly running = new Map<Worker, Job>();
  private readonly started = new Map<Worker, number>();
  private readonly live = new Set<Worker>();
  private readonly retiring = new Map<Worker, NodeJS.Timeout>();
  /** Moving average of one hash's time on a thread, in ms. */
  private hashMs = FIRST_HASH_MS_GUESS;

  constructor(private readonly size: number) {}

  derive(
    password: string,
    salt: Buffer,
    options: ScryptOptions,
    requester?: HashRequester,
  ): Promise<Buffer> {
    if (requester) this.admit(requester);
    return new Promise((resolve, reject) => {
      const lane = requester?.address ?? LOCAL;
      const job: Job = {
        password,
        salt,
        options,
        requester,
        queuedAt: Date.now(),
        resolve,
        reject,
      };
      const waiting = this.lanes.get(lane);
      if (waiting) waiting.push(job);
      else this.lanes.set(lane, [job]);
      if (requester) {
        const { username } = requester;
        this.queuedByUsername.set(username, (this.queuedByUsername.get(username) ?? 0) + 1);
      }
      this.pump();
    });
  }

  /** Throws PasswordHashingBusyError unless a check for `requester` would start in time. */
  private admit({ address, username }: HashRequester) {
    const own = this.lanes.get(address)?.length ?? 0;
    // Jobs served before this one, taking turns: up to own + 1 from every other lane.
    let ahead = own;
    for (const [lane, jobs] of this.lanes) {
      if (lane !== address) ahead += Math.min(jobs.length, own + 1);
    }
    const busy = this.running.size >= this.size;
    const waitMs = ((ahead + (busy ? 1 : 0)) / this.size) * this.hashMs;
    const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
    if ((this.queuedByUsername.get(username) ?? 0) >= MAX_QUEUED_PER_USERNAME) {
      throw new PasswordHashingBusyError('share', retryAfter);
    }
    if (waitMs > WAIT_BUDGET_MS) {
      throw new PasswordHashingBusyError(own > 0 ? 'share' : 'saturated', retryAfter);
    }
  }

  /** The next job in turn: the first lane's first job, that lane then going last. */
  private next(): Job | undefined {
    for (const [lane, jobs] of this.lanes) {
      const job = jobs.shift()!;
      this.lanes.delete(lane);
      if (jobs.length > 0) this.lanes.set(lane, jobs);
      if (job.requester) {
        const { username } = job.requester;
        const left = (this.queuedByUsername.get(username) ?? 1) - 1;
        if (left > 0) this.queuedByUsername.set(username, left);
        else this.queuedByUsername.delete(username);
        // Admitted on an estimate that proved too low (hashes got slower): refused now rather
        // than answered late.
        if (Date.now() - job.queuedAt > WAIT_BUDGET_MS) {
          job.reject(new PasswordHashingBusyError('saturated', Math.ceil(this.hashMs / 1000)));
          return this.next();
        }
      }
      return job;
    }
    return undefined;
  }

  private pump() {
    while (this.lanes.size > 0) {
      const worker = this.idle.pop() ?? (this.live.size < this.size ? this.spawn() : undefined);
      if (!worker) return;
      const job = this.next();
      if (!job) {
        worker.unref();
        this.idle.push(worker);
        return;
      }
      clearTimeout(this.retiring.get(worker));
      this.retiring.delete(worker);
      this.running.set(worker, job);
      this.started.set(worker, performance.now());
      // Referenced only while it works, so that an idle worker never keeps the process alive.
      worker.ref();
      worker.postMessage({
        password: job.password,
        salt: job.salt,
        keyLength: KEY_LENGTH,
        options: { ...job.options, maxmem: MAX_MEMORY },
      });
    }
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    this.live.add(worker);
    worker.on('message', (message: { key?: Uint8Array; error?: string }) => {
      const job = this.running.get(worker);
      this.running.delete(worker);
      const took = performance.now() - (this.started.get(worker) ?? performance.now());
      this.hashMs = 0.8 * this.hashMs + 0.2 * took;
      worker.unref();
      this.idle.push(worker);
      this.retiring.set(worker, setTimeout(() => void this.end(worker), IDLE_MS).unref());
      if (message.error !== undefined) job?.reject(new Error(message.error));
      else job?.resolve(Buffer.from(message.key!));
      this.pump();
    });
    worker.on('error', (error) => this.lose(worker, error));
    worker.on('exit', (code) => this.lose(worker, new Error(`scrypt worker exited (${code})`)));
    return worker;
  }

  /**
   * Ends every thread (on shutdown; a later hash starts new ones). Each thread is a thread of
   * the process until it ends, and a process waits for all of them before it exits.
   */
  async close(): Promise<void> {
    await Promise.all([...this.live].map((worker) => this.end(worker)));
  }

  private async end(worker: Worker) {
    if (!this.live.has(worker)) return;
    this.forget(worker)?.reject(new Error('scrypt worker stopped'));
    await worker.terminate();
  }

  /** Drops a worker from the pool; its job, if it had one. */
  private forget(worker: Worker): Job | undefined {
    this.started.delete(worker);
    clearTimeout(this.retiring.get(worker));
    this.retiring.delete(worker);
    this.live.delete(worker);
    const at = this.idle.indexOf(worker);
    if (at >= 0) this.idle.splice(at, 1);
    const job = this.running.get(worker);
    this.running.delete(worker);
    return job;
  }

  /** A worker that died fails its job; a new one is started for the next. */
  private lose(worker: Worker, error: Error) {
    if (!this.live.has(worker)) return; // 'error' is followed by 'exit': handled once
    this.forget(worker)?.reject(error);
    this.pump();
  }
}

const threads = new ScryptThreads(Math.max(1, availableParallelism() - 1));

function derive(
  password: string,
  salt: Buffer,
  options: ScryptOptions,
  requester?: HashRequester,
): Promise<Buffer> {
  return threads.derive(password, salt, options, requester);
}

/** Ends the hashing threads (application shutdown); hashing later starts new ones. */
export function stopPasswordThreads(): Promise<void> {
  return threads.close();
}

/** `scrypt$N$r$p$<salt>$<key>`: the parameters travel with the hash so the cost can be raised. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')]
    .map(String)
    .join('$');
}

// Checked against when the username is unknown, so that the answer time does not tell which
// usernames exist.
let unknownUserHash: Promise<string> | undefined;

/**
 * Constant-time check of `password`; `undefined` stands for "no such user". With `requester`,
 * the check takes its turn among that address's (ScryptThreads), and may be refused with
 * PasswordHashingBusyError.
 */
export async function verifyPassword(
  password: string,
  stored: string | undefined,
  requester?: HashRequester,
): Promise<boolean> {
  const hash =
    stored ?? (await (unknownUserHash ??= hashPassword(randomBytes(16).toString('hex'))));
  const [scheme, N, r, p, salt, expected] = hash.split('$');
  if (scheme !== 'scrypt' || !salt || !expected) return false;
  const wanted = Buffer.from(expected, 'base64url');
  const actual = await derive(
    password,
    Buffer.from(salt, 'base64url'),
    { N: Number(N), r: Number(r), p: Number(p) },
    requester,
  );
  return actual.length === wanted.length && timingSafeEqual(actual, wanted) && stored !== undefined;
}
