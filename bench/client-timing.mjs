// Whether an unknown client_id can be told from a known one by the time its refusal takes
// (docs/contract.md §3: "an unknown client and a wrong secret get the same answer, in about the
// same time"). Starts the built server (as `npm start` runs it) on a temporary SQLite file, or on
// PostgreSQL with `--pg <URL of an empty database>`, registers one client, then sends alternated
// pairs of refused token requests on one kept-alive connection: the known client_id with a wrong
// secret, and an unknown one (one fixed random UUID, or a fresh one each time with
// `--unknown random`: each fresh id also costs the first failure counter of its own, which the
// known id's second request does not), in an order that alternates pair by pair. Prints the mean of
// (unknown − known) in µs, its standard error and z = mean / standard error: |z| < 2 means no
// difference shows at this sample size.
// Usage: node bench/client-timing.mjs [--pairs 800] [--warmup 200] [--pg postgres://…]
//        [--unknown fixed|random]
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import { request as httpRequest, Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { freePort } from './baseline.mjs';
import { commandLine } from './command-line.mjs';
import { serverArgs } from './server-command.mjs';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..');
const { values: args } = commandLine(import.meta.url, {
  options: {
    pairs: { type: 'string', default: '800' },
    warmup: { type: 'string', default: '200' },
    pg: { type: 'string' },
    unknown: { type: 'string', default: 'fixed' },
  },
});
const PAIRS = Number(args.pairs);
const WARMUP = Number(args.warmup);
if (!(PAIRS >= 2) || !(WARMUP >= 0) || !['random', 'fixed'].includes(args.unknown)) {
  console.error('usage: node bench/client-timing.mjs [--pairs N] [--warmup N] [--pg URL]');
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), 'company-api-client-timing-'));
const port = await freePort();
const env = {
  ...process.env,
  DATABASE_URL: args.pg ?? `sqlite:${join(work, 'bench.sqlite')}`,
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
  PORT: String(port),
  // Every request here is a refused client authentication: no limit may step in.
  THROTTLE_TOKEN_PER_IP: '100000000',
  THROTTLE_TOKEN_FAILURES_PER_CLIENT: '100000000',
};
const client = JSON.parse(
  execFileSync(
    process.execPath,
    [
      join(ROOT, 'dist/src/cli.js'),
      'clients:create',
      '--name',
      'timing',
      '--scopes',
      'customers:read',
    ],
    { cwd: ROOT, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  ),
);
const server = spawn(process.execPath, serverArgs(ROOT), {
  cwd: ROOT,
  env,
  stdio: ['ignore', 'ignore', 'inherit'],
});

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
/** One refused token request; resolves to its time in µs, from the first byte sent to the last received. */
function refusal(clientId) {
  const body = JSON.stringify({
    grant_type: 'client_credentials',
    scope: 'customers:read',
    client_id: clientId,
    client_secret: 'not-the-secret-of-any-client-0123456789abc',
  });
  return new Promise((resolveTime, reject) => {
    let started;
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/oauth/token',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          const elapsed = Number(process.hrtime.bigint() - started) / 1000;
          if (res.statusCode !== 401) reject(new Error(`expected 401, got ${res.statusCode}`));
          else resolveTime(elapsed);
        });
      },
    );
    req.on('error', reject);
    started = process.hrtime.bigint();
    req.end(body);
  });
}

try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) break;
    } catch {
      /* not listening yet */
    }
    if (server.exitCode !== null || i > 600) throw new Error('the server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  const fixed = randomUUID();
  const unknownId = () => (args.unknown === 'fixed' ? fixed : randomUUID());
  for (let i = 0; i < WARMUP; i++) {
    await refusal(client.client_id);
    await refusal(unknownId());
  }
  const differences = [];
  for (let i = 0; i < PAIRS; i++) {
    // Which goes first alternates, so that a drift (a GC, the other processes) hits both sides.
    let known;
    let unknown;
    if (i % 2 === 0) {
      known = await refusal(client.client_id);
      unknown = await refusal(unknownId());
    } else {
      unknown = await refusal(unknownId());
      known = await refusal(client.client_id);
    }
    differences.push(unknown - known);
  }
  const mean = differences.reduce((a, b) => a + b, 0) / PAIRS;
  const variance = differences.reduce((a, d) => a + (d - mean) ** 2, 0) / (PAIRS - 1);
  const standardError = Math.sqrt(variance / PAIRS);
  const round = (x) => Math.round(x * 100) / 100;
  console.log(
    JSON.stringify({
      database: args.pg ? 'postgres' : 'sqlite',
      pairs: PAIRS,
      unknown: args.unknown,
      mean_difference_us: round(mean),
      standard_error_us: round(standardError),
      z: round(mean / standardError),
    }),
  );
} finally {
  agent.destroy();
  server.kill('SIGTERM');
}
