import { Logger } from '@nestjs/common';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * How often the worker copies committed WAL frames into the database file. Each checkpoint that
 * copies anything syncs the WAL and the database file: every 25 ms cost updates 8 % (A/B).
 */
const CHECKPOINT_INTERVAL_MS = 200;
/**
 * The writer's own automatic checkpoint, in WAL pages: only a backstop. A checkpoint that runs
 * beside the writer rarely finds the WAL fully copied at the moment the writer starts its next
 * transaction, and only then does SQLite start the WAL file over; the writer's own checkpoint
 * (cheap by then: the worker copied nearly everything) does that every this many pages.
 */
export const WRITER_AUTOCHECKPOINT_PAGES = 4000;

// CommonJS, run by the worker as it stands (no build step, the same under tests and in dist/).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: 0 });
let timer;
const checkpoint = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy (another checkpointer, a recovery) or failing: the next round, or the writer's own
    // checkpoint, does it.
  }
  timer = setTimeout(checkpoint, workerData.intervalMs);
};
parentPort.once('message', () => {
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
checkpoint();
`;

/**
 * WAL checkpoints of a SQLite file on a worker thread with a connection of its own: copying the
 * pages that commits appended to the WAL back into the database file (and the syncs around it)
 * was about half of a webhook delivery's commit on the writer's thread (docs/benchmarks.md). A
 * PASSIVE checkpoint takes no lock a writer or a reader waits for.
 */
export class SqliteCheckpointer {
  private readonly exited: Promise<unknown>;

  private constructor(private readonly worker: Worker) {
    this.exited = new Promise((resolve) => worker.once('exit', resolve));
  }

  static start(file: string): SqliteCheckpointer {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        file,
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
        intervalMs: CHECKPOINT_INTERVAL_MS,
      },
    });
    // A failing worker only means the writer's backstop checkpoints do all the work: said once,
    // since commits get slower and the WAL file larger (up to the backstop's pages).
    worker.once('error', (error: Error) =>
      new Logger('SQLite').warn(
        `WAL checkpoints fall back to the writer (${error.message}); commits are slower until a restart`,
      ),
    );
    // Never what keeps a process alive: the writer checkpoints by itself as well.
    worker.unref();
    return new SqliteCheckpointer(worker);
  }

  /** Stops the worker after its current checkpoint (at once if it already ended). */
  async stop(): Promise<void> {
    // Referenced again while it stops: an unreferenced worker is no reason for the process to
    // wait, and a process with nothing else to do would exit (code 0) in the middle of this.
    this.worker.ref();
    this.worker.postMessage('stop');
    await this.exited;
  }
}
