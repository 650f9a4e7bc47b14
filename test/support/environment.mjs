// Jest's node environment, plus: child processes a test file started through
// test/support/processes.ts and left running (a test that failed half-way, before its cleanup)
// are killed when the file ends. A live child keeps Jest's worker process from exiting, which
// Jest reports as "A worker process has failed to exit gracefully".
import { TestEnvironment } from 'jest-environment-node';

export default class ServiceTestEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
  }

  async teardown() {
    const children = [...(this.global.__testChildProcesses ?? [])];
    const running = children.filter(isRunning);
    if (running.length > 0) {
      process.stderr.write(
        `${this.testPath}: stopping ${running.length} child process(es) it left running\n`,
      );
    }
    await Promise.all(children.map(stop));
    await super.teardown();
  }
}

const isRunning = (child) => child.exitCode === null && child.signalCode === null;

async function stop(child) {
  if (isRunning(child)) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
  // Our ends of its pipes, which a grandchild may still hold open.
  for (const stream of child.stdio) stream?.destroy();
}
