// Instructions per request, counted by valgrind's callgrind: the same build, load and request
// count give the same figure within about 1 % whatever else the machine is doing, where req/s on
// this VM moves by 20 % between runs. For A/B decisions on the server's own CPU work (kernel time
// is not counted). SQLite (a temporary file), or PostgreSQL with `--pg <URL of an empty
// database>` (only the server is counted, not PostgreSQL); the server runs exactly as `npm start`
// runs it.
// Usage: node bench/instructions.mjs <a|b|c|e|k|u> [--pg postgres://…] [--requests 10000]
//        [--warmup 10000] [--node-arg=<flag>]... (extra node flags for the server, as in
//        bench/run.mjs) [--signed] [--gc]
//   a: GET company, b: PUT company, c: POST /v2/webhooks, e: client_credentials token
//   k and u, a pair: refused token requests (401), k for the known client id with a wrong secret,
//   u for an unknown client id (one fixed UUID, as bench/client-timing.mjs sends by default)
//   --signed: c's client has a signing secret and every delivery is signed (Standard Webhooks)
//   --webhook-id: c's deliveries carry a fresh webhook-id, unsigned (what --signed compares to:
//   a webhook-id, signed or not, makes it the idempotency key instead of the attempt_id)
//   --gc: also counts the server's young (Scavenge) and full (Mark-Compact) GCs during the
//   counted requests, by `--trace-gc` (its printing adds well under 1 % to the figure)
// Counts the main thread only: the checkpoint worker's timer runs ~50x as often per request
// under valgrind as it does at full speed. Takes 3–5 minutes.
import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Buffer } from 'node:buffer';
import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { commandLine } from './command-line.mjs';
import { freePort } from './baseline.mjs';
import { companyUpdate, SCOPES, webhookDelivery } from './requests.mjs';
import { serverArgs } from './server-command.mjs';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..');
const { values: args, positionals } = commandLine(import.meta.url, {
  allowPositionals: true,
  options: {
    pg: { type: 'string' },
    requests: { type: 'string', default: '10000' },
    warmup: { type: 'string', default: '10000' },
    'node-arg': { type: 'string', multiple: true, default: [] },
    signed: { type: 'boolean', default: false },
    'webhook-id': { type: 'boolean', default: false },
    gc: { type: 'boolean', default: false },
  },
});
const scenario = positionals[0];
if (!['a', 'b', 'c', 'e', 'k', 'u'].includes(scenario)) {
  console.error(
    'usage: node bench/instructions.mjs <a|b|c|e|k|u> [--pg URL] [--requests N] [--warmup N]',
  );
  process.exit(2);
}
const REQUESTS = Number(args.requests);

const work = mkdtempSync(join(tmpdir(), 'company-api-instructions-'));
const port = await freePort();
// valgrind names its control pipe after USER and HOST; callgrind_control must find the same.
const names = { USER: process.env.USER ?? 'root', HOST: '127.0.0.1' };
const env = {
  ...process.env,
  ...names,
  DATABASE_URL: args.pg ?? `sqlite:${join(work, 'bench.sqlite')}`,
  LOG_LEVEL: 'warn',
  PORT: String(port),
  THROTTLE_TOKEN_PER_IP: '100000000',
  THROTTLE_TOKEN_FAILURES_PER_CLIENT: '100000000',
  WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
};
const cli = (...cliArgs) =>
  JSON.parse(
    execFileSync(process.execPath, [join(ROOT, 'dist/src/cli.js'), ...cliArgs], {
      cwd: ROOT,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
const client = cli('clients:create', '--name', 'bench', '--scopes', SCOPES);
cli('customers:seed', '--count', '1000');
const signer = args.signed
  ? new Webhook(cli('clients:webhook-secret', '--client-id', client.client_id).secret)
  : undefined;
/** Standard Webhooks headers for a delivery body, signed now (the signing is not counted). */
const signed = (body) => {
  const id = `msg_${randomBytes(8).toString('hex')}`;
  const at = new Date();
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signer.sign(id, at, body),
  };
};

const out = join(work, 'callgrind.out');
const server = spawn(
  'valgrind',
  [
    '--tool=callgrind',
    '--smc-check=all-non-file', // V8 writes the code it runs
    '--instr-atstart=no', // counted from after the warm-up only
    '--separate-threads=yes',
    '--dump-line=no',
    `--callgrind-out-file=${out}`,
    process.execPath,
    ...serverArgs(ROOT, [...(args.gc ? ['--trace-gc'] : []), ...args['node-arg']]),
  ],
  { cwd: ROOT, env, stdio: ['ignore', args.gc ? 'pipe' : 'ignore', 'ignore'] },
);
/** --trace-gc's lines, counted while `gcs.counting`. */
const gcs = { counting: false, young: 0, full: 0 };
server.stdout?.setEncoding('utf8');
let partial = '';
server.stdout?.on('data', (chunk) => {
  const lines = (partial + chunk).split('\n');
  partial = lines.pop();
  if (!gcs.counting) return;
  for (const line of lines) {
    if (/: Scavenge\b/.test(line)) gcs.young += 1;
    else if (/: Mark-Compact\b/.test(line)) gcs.full += 1;
  }
});
const control = (flag) =>
  execFileSync('callgrind_control', [flag, String(server.pid)], {
    env: { ...process.env, ...names },
    stdio: 'ignore',
  });

try {
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok) break;
    } catch {
      /* not yet listening */
    }
    if (i > 600) throw new Error('the server did not start under valgrind');
    await new Promise((r) => setTimeout(r, 500));
  }
  const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
  const tokenRequest = {
    method: 'POST',
    path: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
    body: `grant_type=client_credentials&scope=${encodeURIComponent(SCOPES)}`,
  };
  const token = await (
    await fetch(base + tokenRequest.path, { ...tokenRequest, headers: tokenRequest.headers })
  ).json();
  /** (k) and (u): a client_credentials request with a wrong secret, in the body (no Basic). */
  const refusedRequest = (clientId) => ({
    method: 'POST',
    path: '/oauth/token',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      scope: 'customers:read',
      client_id: clientId,
      client_secret: 'not-the-secret-of-any-client-0123456789abc',
    }),
  });
  const unknownClientId = randomUUID();
  let n = 0;
  const next = () => {
    n += 1;
    const id = (n % 1000) + 1;
    switch (scenario) {
      case 'a':
        return { method: 'GET', path: `/v2/customers/${id}/company` };
      case 'b':
        return companyUpdate(id, n);
      case 'c': {
        const delivery = webhookDelivery(n);
        if (signer) return { ...delivery, headers: signed(delivery.body) };
        if (args['webhook-id']) {
          return {
            ...delivery,
            headers: { 'webhook-id': `msg_${randomBytes(8).toString('hex')}` },
          };
        }
        return delivery;
      }
      case 'k':
        return refusedRequest(client.client_id);
      case 'u':
        return refusedRequest(unknownClientId);
      default:
        return tokenRequest;
    }
  };
  const refusals = scenario === 'k' || scenario === 'u';
  // 10 connections, as `npm run bench`: how many deliveries share a commit depends on it.
  const load = async (amount) => {
    const result = await autocannon({
      url: base,
      connections: 10,
      amount,
      timeout: 120,
      headers: refusals
        ? {}
        : { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' },
      requests: [
        {
          setupRequest: (request) => {
            const changes = next();
            return { ...request, ...changes, headers: { ...request.headers, ...changes.headers } };
          },
        },
      ],
    });
    const answered = refusals ? (result.statusCodeStats['401']?.count ?? 0) : result['2xx'];
    if (answered !== amount) {
      const { errors, timeouts, statusCodeStats } = result;
      const statuses = Object.fromEntries(
        Object.entries(statusCodeStats).map(([status, { count }]) => [status, count]),
      );
      throw new Error(
        `${amount - answered} requests failed: ${JSON.stringify({ statuses, errors, timeouts })}`,
      );
    }
  };
  await load(Number(args.warmup));
  control('--instr=on');
  gcs.counting = true;
  await load(REQUESTS);
  control('--dump');
  gcs.counting = false;
  // The dump's file for the main thread (thread 1): `<out>.1-01`.
  const dump = readdirSync(work).find((f) => f.endsWith('.1-01'));
  const total = Number(
    /^(?:summary|totals): (\d+)/m.exec(readFileSync(join(work, dump), 'utf8'))[1],
  );
  console.log(
    JSON.stringify({
      scenario,
      requests: REQUESTS,
      instructions_per_request: Math.round(total / REQUESTS),
      ...(args.gc && { young_gcs: gcs.young, full_gcs: gcs.full }),
      dump: join(work, dump),
    }),
  );
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
}
