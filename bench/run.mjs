// Benchmark: the built server against a raw node:http baseline measured in the same run.
// Usage: npm run bench [-- --pg postgres://127.0.0.1/db] [--duration 5] [--runs 3] [--smoke]
//        [--only a,c] [--customers 1000000] [--webhooks 10000000] [--connections 10] [--help]
//        (every option: the parseArgs options below; docs/benchmarks.md)
// On PostgreSQL, scenarios (a), (b) and (c) are also paired with pgbench running the same database work
// (bench/pgbench-ceiling.mjs): the database's own ceiling, measured in the same run.
import autocannon from 'autocannon';
import { spawn, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { commandLine } from './command-line.mjs';
import { freePort, startBaseline } from './baseline.mjs';
import { companyUpdate, SCOPES, webhookDelivery } from './requests.mjs';
import { serverArgs } from './server-command.mjs';
import {
  CEILING_SCENARIOS,
  dropCeiling,
  pgbenchAvailable,
  prepareCeiling,
  runCeiling,
} from './pgbench-ceiling.mjs';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..');
const { values: args } = commandLine(import.meta.url, {
  options: {
    pg: { type: 'string' },
    // A Redis URL (e.g. redis://127.0.0.1:6379/9): adds token issuance with the throttling
    // counters in Redis, on a second server, as its own row.
    redis: { type: 'string' },
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '2' },
    runs: { type: 'string', default: '3' },
    customers: { type: 'string', default: '1000000' },
    // Webhook events to seed for the paged webhook list scenarios (g); 0 leaves (g) out.
    webhooks: { type: 'string', default: '0' },
    // Old webhook events pruned while (h) measures intake; 0 leaves (h) out.
    'prune-rows': { type: 'string', default: '0' },
    smoke: { type: 'boolean', default: false },
    // Concurrent connections of every load run (and pgbench's clients), for experiments.
    connections: { type: 'string', default: '10' },
    // Scenario letters to run (the baseline always runs), e.g. `--only a,c`; for quick A/B runs.
    only: { type: 'string' },
    // Extra node flags for the server, e.g. `--node-arg=--cpu-prof --node-arg=--cpu-prof-dir=/tmp/prof`.
    'node-arg': { type: 'string', multiple: true, default: [] },
  },
});
const SMOKE = args.smoke;
const DURATION = SMOKE ? 5 : Number(args.duration);
const WARMUP = SMOKE ? 1 : Number(args.warmup);
const RUNS = SMOKE ? 1 : Number(args.runs);
const CUSTOMERS = SMOKE ? 1000 : Number(args.customers);
const WEBHOOKS = SMOKE ? 0 : Number(args.webhooks);
const PRUNE_ROWS = SMOKE ? 0 : Number(args['prune-rows']);
const CONNECTIONS = Number(args.connections);
const ID_SPAN = Math.min(CUSTOMERS, 10000);
const ONLY = args.only ? new Set(args.only.split(',').map((s) => s.trim())) : null;
const wanted = (name) => !ONLY || name.startsWith('baseline') || ONLY.has(name[1]);

const work = mkdtempSync(join(tmpdir(), 'company-api-bench-'));
const databaseUrl = args.pg ?? `sqlite:${join(work, 'bench.sqlite')}`;
const serverEnv = {
  ...process.env,
  DATABASE_URL: databaseUrl,
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
  THROTTLE_TOKEN_PER_IP: '100000000',
  THROTTLE_TOKEN_FAILURES_PER_CLIENT: '100000000',
  THROTTLE_TOKEN_FAILURES_PER_USER: '100000000',
  THROTTLE_TOKEN_FAILURES_PER_USER_ALL_ADDRESSES: '100000000',
  // For the signed deliveries' client (its signing secret is stored encrypted under this key).
  WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
};

function cli(...cliArgs) {
  const out = execFileSync(process.execPath, [join(ROOT, 'dist/src/cli.js'), ...cliArgs], {
    cwd: ROOT,
    env: serverEnv,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 20,
  });
  return JSON.parse(out);
}

async function startServer(port, extraEnv = {}) {
  const child = spawn(process.execPath, serverArgs(ROOT, args['node-arg']), {
    cwd: ROOT,
    env: { ...serverEnv, ...extraEnv, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok) return { child, base };
    } catch {
      /* not yet listening */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error('server did not start');
}

/** Peak RSS of a process, sampled every 100 ms while `fn` runs. */
async function withRss(pid, fn) {
  let peak = 0;
  const sample = () => {
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      peak = Math.max(peak, kb * 1024);
    } catch {
      /* process gone */
    }
  };
  const timer = setInterval(sample, 100);
  try {
    sample();
    return { result: await fn(), rss: peak };
  } finally {
    clearInterval(timer);
    sample();
  }
}

/**
 * A load: a warm-up run of its own, then the measured run; `measuring()` is called between the
 * two, so that CPU time read there covers the measured run's requests only.
 */
async function load(opts, measuring = () => {}) {
  if (WARMUP > 0) await autocannon({ connections: CONNECTIONS, ...opts, duration: WARMUP });
  measuring();
  return autocannon({ connections: CONNECTIONS, duration: DURATION, ...opts });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Linux's USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s.
const CLOCK_TICKS = 100;

/** CPU time a process has used so far, in microseconds: user and system (the kernel's share). */
function cpuMicros(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    const tick = 1e6 / CLOCK_TICKS;
    return { user: Number(fields[11]) * tick, sys: Number(fields[12]) * tick };
  } catch {
    return { user: NaN, sys: NaN };
  }
}

/** One autocannon run against `pid`'s server: throughput, latency, peak RSS, CPU per request. */
async function runOnce(pid, opts) {
  let cpuBefore;
  const { result, rss } = await withRss(pid, () => load(opts, () => (cpuBefore = cpuMicros(pid))));
  const cpuAfter = cpuMicros(pid);
  const requests = Math.max(1, result.requests.total);
  const user = cpuAfter.user - cpuBefore.user;
  const sys = cpuAfter.sys - cpuBefore.sys;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    bad: result.non2xx + result.errors + result.timeouts,
    cpu_us: Math.round((user + sys) / requests),
    cpu_sys_us: Math.round(sys / requests),
    rss,
  };
}

/**
 * Each run of a scenario is paired with a baseline run just before it, and its ratio is taken
 * to that run: this VM's speed drifts by 2x over minutes, so a ratio to a baseline measured once
 * at the start would measure the drift as much as the service.
 */
/**
 * `versus`: another server (`pid`, autocannon `opts()`) run beside each measured run (before it,
 * then after it, alternately), with
 * the measured run's share of it (the Redis counters' row against in-process counting).
 * `concurrent`: autocannon options of a second load run beside the measured one. `ceiling`: the
 * pgbench run paired with each run. `before`: set-up before each run (not timed); `during`: work
 * started with the measured run, resolving to its duration in ms (reported per run), and then
 * each run is also paired with a run of the same load just before, without it, on the same
 * tables (`without_rps`, `share_of_without`: what `during` costs the measured load).
 */
async function measure(
  name,
  pid,
  makeOpts,
  baseline,
  { concurrent, ceiling, before, during, versus } = {},
) {
  const runs = [];
  let rss = 0;
  for (let i = 0; i < RUNS; i++) {
    before?.();
    const base = await runOnce(baseline.pid, baseline.opts());
    const without = during ? await runOnce(pid, makeOpts()) : undefined;
    // The pair alternates its order, so that neither side always meets the fuller tables.
    const versusFirst = versus && i % 2 === 0;
    let other = versusFirst ? await runOnce(versus.pid, versus.opts()) : undefined;
    const db = ceiling ? ceiling() : undefined;
    const side = during?.();
    const [run] = await Promise.all([
      runOnce(pid, makeOpts()),
      ...(concurrent ? [load(concurrent())] : []),
    ]);
    if (versus && !versusFirst) other = await runOnce(versus.pid, versus.opts());
    const sideMs = side ? await side : undefined;
    rss = Math.max(rss, run.rss);
    baseline.runs.push(base);
    runs.push({
      ...run,
      baseline_rps: base.rps,
      ratio: run.rps / base.rps,
      ...(db && { ceiling_tps: db.tps, ceiling_share: run.rps / db.tps }),
      ...(sideMs !== undefined && { during_ms: sideMs }),
      ...(without && { without_rps: without.rps, share_of_without: run.rps / without.rps }),
      ...(other && {
        versus_rps: other.rps,
        versus_cpu_us: other.cpu_us,
        share_of_versus: run.rps / other.rps,
      }),
    });
  }
  const pairedRuns = runs.filter((r) => r.without_rps);
  const versusRuns = runs.filter((r) => r.versus_rps);
  const ceilingRuns = runs.filter((r) => r.ceiling_tps);
  return {
    scenario: name,
    rps: median(runs.map((r) => r.rps)),
    p50_ms: median(runs.map((r) => r.p50)),
    p99_ms: median(runs.map((r) => r.p99)),
    ratio: median(runs.map((r) => r.ratio)),
    cpu_us_per_request: median(runs.map((r) => r.cpu_us)),
    cpu_sys_us_per_request: median(runs.map((r) => r.cpu_sys_us)),
    failed_responses: runs.reduce((n, r) => n + r.bad, 0),
    rss_mb: Math.round(rss / 2 ** 20),
    ...(pairedRuns.length && {
      without_rps: median(pairedRuns.map((r) => r.without_rps)),
      share_of_without: median(pairedRuns.map((r) => r.share_of_without)),
    }),
    ...(versusRuns.length && {
      versus: versus.label,
      versus_rps: median(versusRuns.map((r) => r.versus_rps)),
      versus_cpu_us_per_request: median(versusRuns.map((r) => r.versus_cpu_us)),
      share_of_versus: median(versusRuns.map((r) => r.share_of_versus)),
    }),
    ...(ceilingRuns.length && {
      ceiling_tps: median(ceilingRuns.map((r) => r.ceiling_tps)),
      ceiling_share: median(ceilingRuns.map((r) => r.ceiling_share)),
    }),
    runs,
  };
}

function cycling(pathFor, extra = {}) {
  let n = 0;
  return {
    ...extra,
    setupRequest: (req) => {
      n += 1;
      return { ...req, ...pathFor(n) };
    },
  };
}

function versions() {
  const v = (pkg) => {
    try {
      return JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8'))
        .version;
    } catch {
      return 'n/a';
    }
  };
  return {
    node: process.version,
    nestjs: v('@nestjs/core'),
    fastify: v('fastify'),
    typeorm: v('typeorm'),
    'better-sqlite3': v('better-sqlite3'),
    pg: v('pg'),
    jose: v('jose'),
  };
}

async function main() {
  const machine = {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memory_gb: Math.round(totalmem() / 2 ** 30),
    database: args.pg ? 'postgres' : 'sqlite',
  };
  console.log(`machine: ${JSON.stringify(machine)}`);
  console.log(`versions: ${JSON.stringify(versions())}`);
  console.log(
    `each figure: median of ${RUNS} run(s) of ${DURATION}s after ${WARMUP}s warm-up, ${CONNECTIONS} connections`,
  );

  // Seed through the CLI (it also applies the migrations).
  const t0 = Date.now();
  const client = cli(
    'clients:create',
    '--name',
    'bench',
    '--scopes',
    SCOPES,
    '--grants',
    'client_credentials,password',
  );
  // (c) signed: a second client that signs its deliveries (Standard Webhooks), and its secret.
  const signingClient = cli('clients:create', '--name', 'bench-signed', '--scopes', SCOPES);
  const signingSecret = cli(
    'clients:webhook-secret',
    '--client-id',
    signingClient.client_id,
  ).secret;
  const password = 'bench-password-1234';
  cli('users:create', '--username', 'bench', '--password', password);
  cli('customers:seed', '--count', String(CUSTOMERS));
  console.log(`seeded ${CUSTOMERS} customers in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  if (WEBHOOKS > 0) {
    const t1 = Date.now();
    // The bench client's own events (lists show the caller's events only); every 100th failed.
    cli(
      'webhooks:seed',
      '--count',
      String(WEBHOOKS),
      '--client-id',
      client.client_id,
      '--failed-every',
      '100',
    );
    console.log(`seeded ${WEBHOOKS} webhook events in ${((Date.now() - t1) / 1000).toFixed(1)}s`);
  }

  const baseline = await startBaseline(await freePort());
  const { child, base } = await startServer(await freePort());
  const pid = child.pid;
  const withRedis =
    args.redis && !SMOKE ? await startServer(await freePort(), { REDIS_URL: args.redis }) : null;
  const results = [];
  let baselineRow;
  try {
    const tokenBody = JSON.stringify({
      grant_type: 'client_credentials',
      client_id: client.client_id,
      client_secret: client.client_secret,
      scope: SCOPES,
    });
    const tokenRes = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: tokenBody,
    });
    const { access_token: token } = await tokenRes.json();
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const signingTokenRes = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        grant_type: 'client_credentials',
        client_id: signingClient.client_id,
        client_secret: signingClient.client_secret,
        scope: SCOPES,
      }),
    });
    const signingAuth = {
      authorization: `Bearer ${(await signingTokenRes.json()).access_token}`,
      'content-type': 'application/json',
    };
    const passwordBody = JSON.stringify({
      grant_type: 'password',
      client_id: client.client_id,
      client_secret: client.client_secret,
      username: 'bench',
      password,
      scope: 'customers:read',
    });
    const jsonHeaders = { 'content-type': 'application/json', accept: 'application/json' };
    const issueToken = (server) => () => ({
      url: `${server}/oauth/token`,
      method: 'POST',
      headers: jsonHeaders,
      body: tokenBody,
    });

    const getCompany = () => ({
      url: base,
      headers: auth,
      requests: [cycling((n) => ({ path: `/v2/customers/${(n % ID_SPAN) + 1}/company` }))],
    });
    const paired = {
      pid: baseline.pid,
      opts: () => ({ url: `${baseline.base}/v2/customers/1/company` }),
      runs: [],
    };
    let attempt = 1_000_000;
    const postWebhooks = () => ({
      url: base,
      headers: auth,
      requests: [
        cycling(() => {
          attempt += 1;
          return webhookDelivery(attempt);
        }),
      ],
    });
    // (c) with a fresh webhook-id per delivery, unsigned, and the same signed: a webhook-id, signed
    // or not, is the idempotency key in place of the attempt id, so the pair differs only by the
    // signature check. Both runs' deliveries are built before the run (signed with the server's
    // own signer: the package's signatures, its spec), so that the load generator, on the same
    // cores as the server, does the same work per request in both and only the server's differs.
    const { NativeHmacWebhook } = await import('../dist/src/webhooks/native-hmac-webhook.js');
    const signer = new NativeHmacWebhook(signingSecret);
    // More than a run sends (warm-up included): each delivery is new, never a redelivery.
    const DELIVERIES_PER_RUN = 80_000;
    const deliveriesWithId = (headers, sign) => () => {
      const at = new Date();
      const timestamp = String(Math.floor(at.getTime() / 1000));
      const built = Array.from({ length: DELIVERIES_PER_RUN }, () => {
        attempt += 1;
        const delivery = webhookDelivery(attempt);
        const id = `msg_${attempt}_${randomBytes(4).toString('hex')}`;
        const withId = { ...headers, 'webhook-id': id };
        if (!sign) return { ...delivery, headers: withId };
        return {
          ...delivery,
          headers: {
            ...withId,
            'webhook-timestamp': timestamp,
            'webhook-signature': signer.sign(id, at, delivery.body),
          },
        };
      });
      return { url: base, headers, requests: [cycling((n) => built[n % built.length])] };
    };
    const unsignedWithId = deliveriesWithId(auth, false);
    const scenarios = [['(a) GET /v2/customers/:id/company', pid, getCompany]];
    if (!SMOKE) {
      scenarios.push(
        [
          '(b) PUT /v2/customers/:id/company',
          pid,
          () => ({
            url: base,
            headers: auth,
            requests: [cycling((n) => companyUpdate((n % ID_SPAN) + 1, n))],
          }),
        ],
        ['(c) POST /v2/webhooks', pid, postWebhooks],
        [
          '(c) POST /v2/webhooks, signed (Standard Webhooks)',
          pid,
          deliveriesWithId(signingAuth, true),
          // Each run paired with unsigned deliveries with a webhook-id (before or after it, alternately).
          { versus: { pid, opts: unsignedWithId, label: 'unsigned' } },
        ],
        ['(e) POST /oauth/token client_credentials', pid, issueToken(base)],
        ...(withRedis
          ? [
              [
                '(e) POST /oauth/token client_credentials, counters in Redis',
                withRedis.child.pid,
                issueToken(withRedis.base),
                // Each run paired with the in-process server, before or after it alternately (same load).
                { versus: { pid, opts: issueToken(base), label: 'in-process' } },
              ],
            ]
          : []),
        [
          '(e) POST /oauth/token password',
          pid,
          () => ({
            url: `${base}/oauth/token`,
            method: 'POST',
            headers: jsonHeaders,
            body: passwordBody,
          }),
        ],
      );
    }
    if (!SMOKE) {
      // (d) and (g): pages at every position of the list (§7: every page costs about the same).
      scenarios.push(
        ...(await pagePositions('(d) GET /v2/customers', pid, base, '/v2/customers', auth)),
      );
      if (WEBHOOKS > 0) {
        for (const filter of [
          '',
          '&status=processed',
          '&event=learning.attempt.completed&status=failed',
        ]) {
          scenarios.push(
            ...(await pagePositions(
              '(g) GET /v2/webhooks',
              pid,
              base,
              '/v2/webhooks',
              auth,
              filter,
            )),
          );
        }
      }
    }
    const ceilingOf = (name) => {
      const scenario = name[1];
      if (!args.pg || !CEILING_SCENARIOS.includes(scenario)) return undefined;
      return () =>
        runCeiling(args.pg, scenario, { clients: CONNECTIONS, seconds: DURATION, idSpan: ID_SPAN });
    };
    if (args.pg) {
      if (!pgbenchAvailable()) throw new Error('--pg needs pgbench on the PATH (the ceiling runs)');
      prepareCeiling(args.pg);
    }
    for (const [name, target, makeOpts, options] of scenarios.filter(([name]) => wanted(name))) {
      results.push(
        await measure(name, target, makeOpts, paired, { ceiling: ceilingOf(name), ...options }),
      );
      console.log(`  done: ${name}`);
    }
    if (args.pg) dropCeiling(args.pg);

    if (PRUNE_ROWS > 0 && wanted('(h)')) {
      // (h) intake while the retention prune deletes PRUNE_ROWS old events (seeded 40 days old
      // before each run, not timed), each run paired with intake just before the prune.
      const row = await measure(
        `(h) POST /v2/webhooks while webhooks:prune deletes ${PRUNE_ROWS} events`,
        pid,
        postWebhooks,
        paired,
        {
          before: () =>
            cli(
              'webhooks:seed',
              '--count',
              String(PRUNE_ROWS),
              '--client-id',
              'prune-bench',
              '--age-days',
              '40',
            ),
          during: () => {
            const started = Date.now();
            return new Promise((resolve, reject) => {
              const child = spawn(
                process.execPath,
                [join(ROOT, 'dist/src/cli.js'), 'webhooks:prune'],
                {
                  cwd: ROOT,
                  env: serverEnv,
                  stdio: ['ignore', 'ignore', 'inherit'],
                },
              );
              child.on('error', reject);
              child.on('exit', (code) =>
                code === 0
                  ? resolve(Date.now() - started)
                  : reject(new Error(`prune exited ${code}`)),
              );
            });
          },
        },
      );
      results.push(row);
      const pruneMs = row.runs.map((r) => r.during_ms);
      console.log(
        `  done: (h) prune took ${pruneMs.join(', ')} ms; intake during the prune = ` +
          `${(row.share_of_without * 100).toFixed(0)}% of intake just before it, same tables`,
      );
    }

    if (!SMOKE && wanted('(f)')) {
      // (f) latency of (a) while the password grant runs flat out beside it.
      const row = await measure(
        '(f) (a) while (e) password runs beside it',
        pid,
        getCompany,
        paired,
        {
          concurrent: () => ({
            url: `${base}/oauth/token`,
            method: 'POST',
            headers: jsonHeaders,
            body: passwordBody,
          }),
        },
      );
      results.push({ ...row, cpu_us_per_request: null });
    }
    baselineRow = {
      scenario: 'baseline: raw node:http, same URL and body',
      rps: median(paired.runs.map((r) => r.rps)),
      ratio: 1,
      cpu_us_per_request: median(paired.runs.map((r) => r.cpu_us)),
      cpu_sys_us_per_request: median(paired.runs.map((r) => r.cpu_sys_us)),
      runs: paired.runs.map(({ rps, cpu_us, cpu_sys_us }) => ({ rps, cpu_us, cpu_sys_us })),
    };
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
    if (withRedis) {
      withRedis.child.kill('SIGTERM');
      await once(withRedis.child, 'exit');
    }
    baseline.close();
    rmSync(work, { recursive: true, force: true });
  }

  const rows = [baselineRow, ...results];
  const table = rows.map((r) => ({
    scenario: r.scenario,
    'req/s': Math.round(r.rps),
    'p50 ms': r.p50_ms ?? '',
    'p99 ms': r.p99_ms ?? '',
    'vs baseline': `${(r.ratio * 100).toFixed(0)}%`,
    // CPU time of the server per request, and in brackets the kernel's part of it.
    'CPU µs/req (kernel)':
      r.cpu_us_per_request == null ? '' : `${r.cpu_us_per_request} (${r.cpu_sys_us_per_request})`,
    // On PostgreSQL: pgbench doing the same database work, and the service's share of it.
    ...(args.pg && {
      'pgbench tps': r.ceiling_tps ? Math.round(r.ceiling_tps) : '',
      'vs pgbench': r.ceiling_share ? `${(r.ceiling_share * 100).toFixed(0)}%` : '',
    }),
    // (h): intake during the prune against intake just before it, on the same tables.
    ...(r.share_of_without && { 'vs without': `${(r.share_of_without * 100).toFixed(0)}%` }),
    // A row paired with another load run beside each of its runs: the Redis counters' row
    // against in-process counting, signed deliveries against unsigned ones (and their CPU).
    ...(r.share_of_versus && {
      [`vs ${r.versus}`]: `${(r.share_of_versus * 100).toFixed(0)}% (CPU ${r.versus_cpu_us_per_request} µs)`,
    }),
    'RSS MB': r.rss_mb ?? '',
    'non-2xx': r.failed_responses ?? '',
  }));
  console.table(table);

  const outDir = join(ROOT, 'bench/results');
  mkdirSync(outDir, { recursive: true });
  const file = join(
    outDir,
    `${new Date().toISOString().replace(/[:.]/g, '-')}-${machine.database}${SMOKE ? '-smoke' : ''}.json`,
  );
  writeFileSync(
    file,
    JSON.stringify(
      { machine, versions: versions(), duration_s: DURATION, runs: RUNS, results: rows },
      null,
      2,
    ),
  );
  console.log(`results written to ${file}`);
  if (results.some((r) => r.failed_responses > 0)) {
    console.error('some requests failed (non-2xx or errors): see the table');
    process.exitCode = 1;
  }
}

/**
 * A list's pages at its first, quarter, middle, three-quarter and last positions (limit 20), with
 * `filter` appended to the query; the last page is read from page 1's meta.
 */
async function pagePositions(label, pid, base, path, headers, filter = '') {
  const url = (page) =>
    `${base}${path}?result_mode%5Bmode%5D=paginated&result_mode%5Battributes%5D%5Bpage%5D=${page}&result_mode%5Battributes%5D%5Blimit%5D=20${filter}`;
  const first = await fetch(url(1), { headers });
  if (!first.ok) throw new Error(`${path}${filter}: page 1 answered ${first.status}`);
  const { meta } = await first.json();
  const last = meta.last_page;
  const positions = [
    ['1', 1],
    ['1/4', Math.ceil(last / 4)],
    ['1/2', Math.ceil(last / 2)],
    ['3/4', Math.ceil((3 * last) / 4)],
    ['last', last],
  ];
  const shown = filter ? ` ?${filter.slice(1)}` : '';
  return positions.map(([at, page]) => [
    `${label}${shown} page ${at} = ${page} of ${meta.total} (limit 20)`,
    pid,
    () => ({ url: url(page), headers }),
  ]);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
