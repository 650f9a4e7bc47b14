// PostgreSQL's own ceiling for the database work of a scenario: pgbench (PostgreSQL's client,
// written in C) runs the same statements as the service, with as many clients, on the same
// database. The service's share of it says how much of the database's speed the service uses.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SCHEMA = 'bench_ceiling';

/**
 * The scripts, one transaction each, as the service runs them:
 * (a) the prepared primary-key read of GET /v2/customers/:id/company;
 * (b) the one-statement update of PUT /v2/customers/:id/company (a transaction of its own, so
 *     one WAL flush each, as for the service);
 * (c) one webhook delivery as the service runs it on PostgreSQL: a transaction of its own with
 *     the event row and the handler's row, four statements, into copies of the tables, their
 *     triggers and the event sequence (prepareCeiling), found first on pgbench's search_path, so
 *     the runs leave the real ones alone.
 */
const SCRIPTS = {
  a: (idSpan) => `\\set id random(1, ${idSpan})
SELECT company_name, company_type FROM public.customers WHERE id = :id;
`,
  b: (idSpan) => `\\set id random(1, ${idSpan})
UPDATE public.customers SET company_name = 'Company ' || :id WHERE id = :id RETURNING id, company_name, company_type;
`,
  c: () => `\\set attempt random(1, 4000000000000)
BEGIN;
INSERT INTO webhook_events (id, client_id, event, dedupe_key, payload, status, attempts, last_error, received_at, processed_at, last_attempt_at, seq) VALUES (gen_random_uuid(), 'bench-client', 'learning.attempt.completed', 'natural:' || :attempt, '{"user_id":7,"module_id":3,"attempt_id":' || :attempt || '}', 'processed', 1, NULL, now(), now(), now(), nextval('webhook_events_seq')) ON CONFLICT DO NOTHING;
INSERT INTO completed_attempts (client_id, attempt_id, user_id, module_id, recorded_at) VALUES ('bench-client', :attempt, 7, 3, now()) ON CONFLICT DO NOTHING;
COMMIT;
`,
};

/**
 * The tables (c) writes to, directly or through the triggers on them. (The change log's copy keeps
 * its id default, which draws on the real table's sequence: the real ids get gaps, nothing more.)
 */
const COPIED_TABLES = ['webhook_events', 'completed_attempts', 'webhook_event_block_changes'];
const TRIGGERED_TABLES = ['webhook_events', 'completed_attempts'];

export function pgbenchAvailable() {
  try {
    execFileSync('pgbench', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function psql(url, sql) {
  execFileSync('psql', [url, '-v', 'ON_ERROR_STOP=1', '-qtAc', sql], {
    stdio: 'inherit',
    env: { ...process.env, PGOPTIONS: '-c client_min_messages=warning' },
  });
}

/**
 * Copies of what (c) writes to: the tables (columns, defaults, indexes, constraints), their
 * triggers (the list-position counts a delivery's insert fires), and the event sequence. Call
 * once after the service has migrated the database.
 */
export function prepareCeiling(url) {
  const tables = COPIED_TABLES.map(
    (table) => `CREATE TABLE ${SCHEMA}.${table} (LIKE public.${table} INCLUDING ALL);`,
  );
  const triggered = TRIGGERED_TABLES.map((table) => `'public.${table}'::regclass`).join(', ');
  psql(
    url,
    `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE; CREATE SCHEMA ${SCHEMA};
     ${tables.join('\n')}
     CREATE SEQUENCE ${SCHEMA}.webhook_events_seq;
     DO $$ DECLARE t record; BEGIN
       FOR t IN SELECT c.relname AS tab, pg_get_triggerdef(g.oid) AS def
           FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
           WHERE g.tgrelid IN (${triggered}) AND NOT g.tgisinternal LOOP
         EXECUTE replace(t.def, ' ON public.' || t.tab || ' ', ' ON ${SCHEMA}.' || t.tab || ' ');
       END LOOP;
     END $$;`,
  );
}

export function dropCeiling(url) {
  psql(url, `DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
}

/**
 * One pgbench run of a scenario's script: transactions a second (each one request's database
 * work), and the mean latency. `clients` as the load generator's connections.
 */
export function runCeiling(url, scenario, { clients, seconds, idSpan }) {
  const dir = mkdtempSync(join(tmpdir(), 'pgbench-'));
  const file = join(dir, `${scenario}.sql`);
  writeFileSync(file, SCRIPTS[scenario](idSpan));
  try {
    const out = execFileSync(
      'pgbench',
      [
        '-n',
        '-M',
        'prepared',
        '-c',
        String(clients),
        '-j',
        '2',
        '-T',
        String(seconds),
        '-f',
        file,
        url,
      ],
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        // The copies first: (c)'s statements name the tables and the sequence as the service does.
        env: { ...process.env, PGOPTIONS: `-c search_path=${SCHEMA},public` },
      },
    );
    const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(out)?.[1]);
    const latency = Number(/latency average = ([\d.]+) ms/.exec(out)?.[1]);
    if (!Number.isFinite(tps)) throw new Error(`pgbench gave no tps:\n${out}`);
    return { tps, latency_ms: latency };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const CEILING_SCENARIOS = Object.keys(SCRIPTS);
