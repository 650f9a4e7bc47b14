// How fast PostgreSQL takes a webhook delivery's statements from Node with no HTTP in the way:
// the upper bound for POST /v2/webhooks on this machine. Ten loops, as the load generator's ten
// connections, each storing one `learning.attempt.completed` delivery at a time through `pg` (as
// the service's TypeORM does), on a database migrated by the service (`npm run migration:run`
// with DATABASE_URL set). Two ways:
//   transaction: what the service does, a transaction per delivery: BEGIN, the event insert,
//                the handler's insert, COMMIT;
//   grouped:     deliveries waiting together share one transaction on a pipelined connection:
//                one insert for the group's events, then a savepoint around each handler's insert
//                (sent with it, not waited for), one COMMIT: the fewest round trips a handler
//                that runs once, in a savepoint of a shared commit, allows.
// Prints deliveries a second, and the CPU time a delivery cost this process and PostgreSQL's
// processes (read from /proc). Its rows (client 'bench-statements') are deleted afterwards.
// Usage: node bench/delivery-statements.mjs --pg postgres://… [--way transaction|grouped]
//        [--seconds 5] [--group 4] [--runners 3]
import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import pg from 'pg';
import { commandLine } from './command-line.mjs';

const { values: args } = commandLine(import.meta.url, {
  options: {
    pg: { type: 'string' },
    way: { type: 'string', default: 'transaction' },
    seconds: { type: 'string', default: '5' },
    group: { type: 'string', default: '4' },
    runners: { type: 'string', default: '3' },
  },
});
if (!args.pg || !['transaction', 'grouped'].includes(args.way)) {
  process.stderr.write('Give --pg <URL of a migrated database> and --way transaction|grouped.\n');
  process.exit(2);
}
const LOOPS = 10;
const CLIENT = 'bench-statements';
const GROUP = Number(args.group);
const RUNNERS = Number(args.runners);

/** CPU seconds used so far by every process whose name starts with "postgres". */
function postgresCpuSeconds() {
  const ticksPerSecond = 100;
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (!readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('postgres')) continue;
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended while it was read.
    }
  }
  return ticks / ticksPerSecond;
}

const EVENT_COLUMNS =
  'id, client_id, event, dedupe_key, payload, status, attempts, last_error, received_at, processed_at, last_attempt_at, seq';
const eventValues = (p) =>
  `($${p + 1}, '${CLIENT}', 'learning.attempt.completed', $${p + 2}, $${p + 3}, 'processed', 1, NULL, $${p + 4}, $${p + 4}, $${p + 4}, nextval('webhook_events_seq'))`;
const INSERT_EVENT = `INSERT INTO webhook_events (${EVENT_COLUMNS}) VALUES ${eventValues(0)} ON CONFLICT DO NOTHING`;
const INSERT_ATTEMPT = `INSERT INTO completed_attempts (client_id, attempt_id, user_id, module_id, recorded_at) VALUES ('${CLIENT}', $1, 7, 3, $2) ON CONFLICT DO NOTHING`;

let attempt = Date.now() * 1000;
function delivery() {
  attempt += 1;
  const payload = JSON.stringify({ attempt_id: attempt, user_id: 7, module_id: 3 });
  return { id: randomUUID(), key: `natural:${attempt}`, payload, attempt, now: new Date() };
}
const eventParameters = (d) => [d.id, d.key, d.payload, d.now];

const clients = [];
for (let i = 0; i < LOOPS; i++) {
  const client = new pg.Client({ connectionString: args.pg, pipeline: args.way === 'grouped' });
  await client.connect();
  clients.push(client);
}
const idle = [...clients];

async function inTransaction(d) {
  const client = idle.pop();
  try {
    await client.query('BEGIN');
    const stored = await client.query(INSERT_EVENT, eventParameters(d));
    if (stored.rowCount) await client.query(INSERT_ATTEMPT, [d.attempt, d.now]);
    await client.query('COMMIT');
  } finally {
    idle.push(client);
  }
}

const waiting = [];
let running = 0;
function grouped(d) {
  return new Promise((resolve, reject) => {
    waiting.push({ d, resolve, reject });
    if (running < RUNNERS) void runGroups();
  });
}
/** Not waited for: on a pipelined connection it goes out with the next statement. */
const send = (client, sql) => void client.query(sql).catch(() => {});
async function runGroups() {
  running += 1;
  while (waiting.length > 0) {
    const group = waiting.splice(0, GROUP);
    const client = idle.pop();
    try {
      send(client, 'BEGIN');
      const values = group.map((_, i) => eventValues(i * 4)).join(', ');
      await client.query(
        `INSERT INTO webhook_events (${EVENT_COLUMNS}) VALUES ${values} ON CONFLICT DO NOTHING`,
        group.flatMap(({ d }) => eventParameters(d)),
      );
      for (const { d } of group) {
        send(client, 'SAVEPOINT delivery');
        await client.query(INSERT_ATTEMPT, [d.attempt, d.now]);
        send(client, 'RELEASE SAVEPOINT delivery');
      }
      await client.query('COMMIT');
      for (const { resolve } of group) resolve();
    } catch (error) {
      for (const { reject } of group) reject(error);
    } finally {
      idle.push(client);
    }
  }
  running -= 1;
}

const store = args.way === 'grouped' ? grouped : inTransaction;
let stored = 0;
const end = Date.now() + Number(args.seconds) * 1000;
const startedAt = Date.now();
const ownCpu = process.cpuUsage();
const postgresCpu = postgresCpuSeconds();
await Promise.all(
  Array.from({ length: LOOPS }, async () => {
    while (Date.now() < end) {
      await store(delivery());
      stored += 1;
    }
  }),
);
const elapsed = (Date.now() - startedAt) / 1000;
const own = process.cpuUsage(ownCpu);
const postgres = postgresCpuSeconds() - postgresCpu;
const way =
  args.way === 'grouped' ? `grouped (${GROUP} a group, ${RUNNERS} runners)` : 'transaction';
console.log(
  `${way}: ${Math.round(stored / elapsed)} deliveries/s; CPU a delivery: this process ` +
    `${Math.round((own.user + own.system) / stored)} µs, PostgreSQL ${Math.round((postgres * 1e6) / stored)} µs`,
);
await clients[0].query(`DELETE FROM completed_attempts WHERE client_id = '${CLIENT}'`);
await clients[0].query(`DELETE FROM webhook_events WHERE client_id = '${CLIENT}'`);
await Promise.all(clients.map((client) => client.end()));
