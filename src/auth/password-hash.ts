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

interface Job {
  password: string;
  salt: Buffer;
  options: ScryptOptions;
  resolve: (key: Buffer) => void;
  reject: (error: Error) => void;
}

class ScryptThreads {
  private readonly idle: Worker[] = [];
  private readonly queue: Job[] = [];
  private readonly running = new Map<Worker, Job>();
  private readonly live = new Set<Worker>();
  private readonly retiring = new Map<Worker, NodeJS.Timeout>();

  constructor(private readonly size: number) {}

  derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.queue.push({ password, salt, options, resolve, reject });
      this.pump();
    });
  }

  private pump() {
    while (this.queue.length > 0) {
      const worker = this.idle.pop() ?? (this.live.size < this.size ? this.spawn() : undefined);
      if (!worker) return;
      const job = this.queue.shift()!;
      clearTimeout(this.retiring.get(worker));
      this.retiring.delete(worker);
      this.running.set(worker, job);
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

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return threads.derive(password, salt, options);
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

/** Constant-time check of `password`; `undefined` stands for "no such user". */
export async function verifyPassword(
  password: string,
  stored: string | undefined,
): Promise<boolean> {
  const hash =
    stored ?? (await (unknownUserHash ??= hashPassword(randomBytes(16).toString('hex'))));
  const [scheme, N, r, p, salt, expected] = hash.split('$');
  if (scheme !== 'scrypt' || !salt || !expected) return false;
  const wanted = Buffer.from(expected, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), {
    N: Number(N),
    r: Number(r),
    p: Number(p),
  });
  return actual.length === wanted.length && timingSafeEqual(actual, wanted) && stored !== undefined;
}
