import { ChildProcess, spawn, type SpawnOptions } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');

/**
 * Where built entry points run unless a test says otherwise: an empty folder, as on a clean
 * clone, so that a developer's `.env` in the repository never reaches the tests.
 */
export const CLEAN_CWD = join(tmpdir(), 'company-api-test-cwd');
mkdirSync(CLEAN_CWD, { recursive: true });

/** TOKEN_ISSUER of the servers tests start (README "Configuration": instances share one). */
export const TEST_ISSUER = 'http://localhost:3000';

/**
 * Every child process a test starts, until it closes: test/support/environment.mjs kills those
 * still running when the test file ends, so that a test failing half-way leaves none behind.
 */
const children: Set<ChildProcess> = ((
  globalThis as Record<string, unknown>
).__testChildProcesses ??= new Set<ChildProcess>()) as Set<ChildProcess>;

/** `spawn()`, with the child stopped at the end of the test file if it is still running. */
export function spawnChild(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const child = spawn(command, args, options);
  children.add(child);
  child.once('close', () => children.delete(child));
  return child;
}

/** Variables for a child: the test's own over ours; `undefined` removes one. */
export type ChildEnv = Record<string, string | undefined>;

function childEnv(...layers: ChildEnv[]): NodeJS.ProcessEnv {
  const merged: ChildEnv = Object.assign({}, ...layers);
  return Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== undefined));
}

/** Runs a built entry point (dist/…) to completion and returns its output. */
export async function runNode(
  script: string,
  args: string[],
  env: ChildEnv,
  timeoutMs = 30000,
  cwd = CLEAN_CWD,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnChild(process.execPath, [resolve(ROOT, script), ...args], {
    cwd,
    env: childEnv(process.env, { LOG_LEVEL: 'warn' }, env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * Whether process `pid` holds a socket listening on `port` (any address): on Linux, the
 * listening socket's inode (/proc/net/tcp, tcp6) among the process's descriptors. Elsewhere
 * assumed.
 */
function holdsListener(pid: number, port: number): boolean {
  let table: string;
  try {
    table = ['tcp', 'tcp6'].map((file) => readFileSync(`/proc/net/${file}`, 'utf8')).join('\n');
  } catch {
    return true;
  }
  const localPort = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = table
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[1]?.endsWith(localPort) && fields[3] === '0A') // 0A: LISTEN
    .map((fields) => `socket:[${fields[9]}]`);
  const descriptors = readdirSync(`/proc/${pid}/fd`).map((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      return ''; // closed meanwhile
    }
  });
  return inodes.some((inode) => descriptors.includes(inode));
}

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts the built server (dist/src/main.js, or another entry script that serves the same app)
 * and waits until GET /health answers 200.
 */
export async function startServer(
  env: ChildEnv,
  timeoutMs = 60000,
  script = 'dist/src/main.js',
  cwd = CLEAN_CWD,
): Promise<ServerProcess> {
  // A port found free can be taken by another test file's server before this one binds it:
  // then this one exits (EADDRINUSE) and is started again on another port.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServerOnce(env, timeoutMs, script, cwd);
    } catch (error) {
      if (attempt === 3 || !/EADDRINUSE/.test((error as Error).message)) throw error;
    }
  }
}

async function startServerOnce(
  env: ChildEnv,
  timeoutMs: number,
  script: string,
  cwd: string,
): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawnChild(process.execPath, [resolve(ROOT, script)], {
    cwd,
    env: childEnv(
      process.env,
      // One issuer for every server a test starts, as a deployment of several instances (or a
      // restart on another port) configures it; the default (from HOST and PORT) would differ.
      { LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: String(port), TOKEN_ISSUER: TEST_ISSUER },
      env,
    ),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (out += chunk));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${out}`);
    try {
      const res = await fetch(`${baseUrl}/health`);
      // Only this child's answer counts: another test's server may hold the port.
      if (res.status === 200 && holdsListener(child.pid!, port)) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not become healthy:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    child,
    baseUrl,
    output: () => out,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      // Already gone (exited, or killed by a signal: then the exit event has fired already).
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const [code] = (await once(child, 'exit')) as [number | null];
      return code;
    },
  };
}
