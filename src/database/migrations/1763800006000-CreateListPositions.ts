import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Counts per block of positions, kept by the database itself (src/database/paged-list.ts says
 * how lists use them): `customers_blocks` (customers by id / 4096) and
 * `webhook_event_blocks` (events by client, event, status and seq / 4096). A paged list sums these few rows to know its
 * exact total for any filter and to find the block where any page starts.
 *
 * Webhook events get `seq`, a dense insertion number (the block key: UUIDv7 ids are not dense),
 * assigned by the database, and `last_attempt_at` (retention counts from it; an index on
 * (status, last_attempt_at) lets pruning find what is due without scanning).
 *
 * PostgreSQL: statement-level triggers with transition tables (one aggregated row per statement,
 * so bulk inserts and prunes stay fast). Webhook events append their changes to
 * `webhook_event_block_changes` instead of updating a block row: concurrent deliveries would
 * otherwise queue on that row's lock until each other's commit. The changes are folded into the
 * blocks in the background (folding is one statement, so readers never see a change twice).
 * SQLite has one writer: row triggers update the block rows directly.
 *
 * 4096, the block size, is written into the triggers: changing it is a new migration.
 */
export class CreateListPositions1763800006000 implements MigrationInterface {
  name = 'CreateListPositions1763800006000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.options.type === 'postgres';
    for (const statement of postgres ? POSTGRES_UP : SQLITE_UP) await queryRunner.query(statement);
    // The customers counter row and its triggers are superseded by customers_blocks.
    await dropRowCounter(queryRunner, 'customers');
    await createPositionBlocks(queryRunner, 'customers');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropPositionBlocks(queryRunner, 'customers');
    await createRowCounter(queryRunner, 'customers');
    const postgres = queryRunner.connection.options.type === 'postgres';
    for (const statement of postgres ? POSTGRES_DOWN : SQLITE_DOWN) {
      await queryRunner.query(statement);
    }
  }
}

const POSTGRES_UP = [
  // Webhook events: seq, numbered in id (arrival) order for the rows already there.
  `ALTER TABLE webhook_events ADD COLUMN seq bigint`,
  `ALTER TABLE webhook_events ADD COLUMN last_attempt_at timestamp`,
  `UPDATE webhook_events w SET seq = n.seq, last_attempt_at = COALESCE(w.processed_at, w.received_at)
     FROM (SELECT id, row_number() OVER (ORDER BY id) AS seq FROM webhook_events) n
     WHERE w.id = n.id`,
  `CREATE SEQUENCE webhook_events_seq`,
  `SELECT setval('webhook_events_seq', COALESCE((SELECT MAX(seq) FROM webhook_events), 0) + 1, false)`,
  `CREATE FUNCTION webhook_events_assign_seq() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     NEW.seq := nextval('webhook_events_seq');
     RETURN NEW;
   END $$`,
  `CREATE TRIGGER webhook_events_assign_seq BEFORE INSERT ON webhook_events
     FOR EACH ROW WHEN (NEW.seq IS NULL) EXECUTE FUNCTION webhook_events_assign_seq()`,
  `CREATE UNIQUE INDEX "UQ_webhook_events_seq" ON webhook_events (seq)`,
  `DROP INDEX "IDX_webhook_events_client_id_id"`,
  `CREATE INDEX "IDX_webhook_events_client_id_seq" ON webhook_events (client_id, seq)`,
  `CREATE INDEX "IDX_webhook_events_status_last_attempt_at" ON webhook_events (status, last_attempt_at)`,

  `CREATE TABLE webhook_event_blocks (
     client_id varchar(64) NOT NULL, event varchar(100) NOT NULL, status varchar(16) NOT NULL,
     block bigint NOT NULL, rows bigint NOT NULL,
     PRIMARY KEY (client_id, event, status, block))`,
  `CREATE TABLE webhook_event_block_changes (
     id bigserial PRIMARY KEY,
     client_id varchar(64) NOT NULL, event varchar(100) NOT NULL, status varchar(16) NOT NULL,
     block bigint NOT NULL, rows bigint NOT NULL)`,
  `INSERT INTO webhook_event_blocks (client_id, event, status, block, rows)
     SELECT client_id, event, status, seq / 4096, COUNT(*) FROM webhook_events GROUP BY 1, 2, 3, 4`,
  `CREATE FUNCTION webhook_event_blocks_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     INSERT INTO webhook_event_block_changes (client_id, event, status, block, rows)
       SELECT client_id, event, status, seq / 4096, COUNT(*) FROM changed_rows GROUP BY 1, 2, 3, 4;
     RETURN NULL;
   END $$`,
  `CREATE FUNCTION webhook_event_blocks_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     INSERT INTO webhook_event_block_changes (client_id, event, status, block, rows)
       SELECT client_id, event, status, seq / 4096, -COUNT(*) FROM changed_rows GROUP BY 1, 2, 3, 4;
     RETURN NULL;
   END $$`,
  `CREATE FUNCTION webhook_event_blocks_updated() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     INSERT INTO webhook_event_block_changes (client_id, event, status, block, rows)
       SELECT client_id, event, status, seq / 4096, SUM(n) FROM (
         SELECT client_id, event, status, seq, -1 AS n FROM old_rows
         UNION ALL
         SELECT client_id, event, status, seq, 1 AS n FROM new_rows
       ) moved GROUP BY 1, 2, 3, 4 HAVING SUM(n) <> 0;
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER webhook_events_count_inserted AFTER INSERT ON webhook_events
     REFERENCING NEW TABLE AS changed_rows
     FOR EACH STATEMENT EXECUTE FUNCTION webhook_event_blocks_inserted()`,
  `CREATE TRIGGER webhook_events_count_deleted AFTER DELETE ON webhook_events
     REFERENCING OLD TABLE AS changed_rows
     FOR EACH STATEMENT EXECUTE FUNCTION webhook_event_blocks_deleted()`,
  `CREATE TRIGGER webhook_events_count_updated AFTER UPDATE ON webhook_events
     REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
     FOR EACH STATEMENT EXECUTE FUNCTION webhook_event_blocks_updated()`,
];

const POSTGRES_DOWN = [
  `DROP TRIGGER webhook_events_count_updated ON webhook_events`,
  `DROP TRIGGER webhook_events_count_deleted ON webhook_events`,
  `DROP TRIGGER webhook_events_count_inserted ON webhook_events`,
  `DROP FUNCTION webhook_event_blocks_updated()`,
  `DROP FUNCTION webhook_event_blocks_deleted()`,
  `DROP FUNCTION webhook_event_blocks_inserted()`,
  `DROP TABLE webhook_event_block_changes`,
  `DROP TABLE webhook_event_blocks`,
  `DROP INDEX "IDX_webhook_events_status_last_attempt_at"`,
  `DROP INDEX "IDX_webhook_events_client_id_seq"`,
  `CREATE INDEX "IDX_webhook_events_client_id_id" ON webhook_events (client_id, id)`,
  `DROP INDEX "UQ_webhook_events_seq"`,
  `DROP TRIGGER webhook_events_assign_seq ON webhook_events`,
  `DROP FUNCTION webhook_events_assign_seq()`,
  `DROP SEQUENCE webhook_events_seq`,
  `ALTER TABLE webhook_events DROP COLUMN last_attempt_at`,
  `ALTER TABLE webhook_events DROP COLUMN seq`,
];

/** SQLite: one writer, so row triggers change the block rows in place. */
const blockUpsert = (table: string, key: string, values: string, by: string) =>
  `INSERT INTO ${table} (${key}, rows) VALUES (${values}, ${by})
     ON CONFLICT (${key}) DO UPDATE SET rows = rows + ${by};`;
const EVENT_KEY = 'client_id, event, status, block';
/** SQLite: moves `row`'s count in `webhook_event_blocks` by `by`. */
const eventBlock = (row: 'NEW' | 'OLD', by: string) =>
  blockUpsert(
    'webhook_event_blocks',
    EVENT_KEY,
    `${row}.client_id, ${row}.event, ${row}.status, ${row}.seq / 4096`,
    by,
  );

/**
 * SQLite's four count triggers of webhook events (insert with a seq, numbering, status change,
 * delete), each running `count(row, by)` for the row whose count it moves.
 */
function sqliteEventCountTriggers(count: (row: 'NEW' | 'OLD', by: string) => string): string[] {
  return [
    `CREATE TRIGGER webhook_events_count_inserted AFTER INSERT ON webhook_events
     WHEN NEW.seq IS NOT NULL BEGIN ${count('NEW', '1')} END`,
    `CREATE TRIGGER webhook_events_count_numbered AFTER UPDATE OF seq ON webhook_events
     WHEN OLD.seq IS NULL AND NEW.seq IS NOT NULL BEGIN ${count('NEW', '1')} END`,
    `CREATE TRIGGER webhook_events_count_status AFTER UPDATE OF status ON webhook_events
     WHEN OLD.seq IS NOT NULL AND OLD.status <> NEW.status BEGIN
     ${count('OLD', '-1')}
     ${count('NEW', '1')}
   END`,
    `CREATE TRIGGER webhook_events_count_deleted AFTER DELETE ON webhook_events
     WHEN OLD.seq IS NOT NULL BEGIN ${count('OLD', '-1')} END`,
  ];
}

const SQLITE_UP = [
  `ALTER TABLE webhook_events ADD COLUMN seq bigint`,
  `ALTER TABLE webhook_events ADD COLUMN last_attempt_at datetime`,
  `UPDATE webhook_events SET seq = n.seq, last_attempt_at = COALESCE(processed_at, received_at)
     FROM (SELECT id, row_number() OVER (ORDER BY id) AS seq FROM webhook_events) n
     WHERE webhook_events.id = n.id`,
  `CREATE UNIQUE INDEX "UQ_webhook_events_seq" ON webhook_events (seq)`,
  `DROP INDEX "IDX_webhook_events_client_id_id"`,
  `CREATE INDEX "IDX_webhook_events_client_id_seq" ON webhook_events (client_id, seq)`,
  `CREATE INDEX "IDX_webhook_events_status_last_attempt_at" ON webhook_events (status, last_attempt_at)`,
  `CREATE TABLE webhook_event_blocks (
     client_id varchar(64) NOT NULL, event varchar(100) NOT NULL, status varchar(16) NOT NULL,
     block integer NOT NULL, rows integer NOT NULL,
     PRIMARY KEY (client_id, event, status, block))`,
  // Unused on SQLite (see above); present so that reads are one query on both databases.
  `CREATE TABLE webhook_event_block_changes (
     id integer PRIMARY KEY AUTOINCREMENT,
     client_id varchar(64) NOT NULL, event varchar(100) NOT NULL, status varchar(16) NOT NULL,
     block integer NOT NULL, rows integer NOT NULL)`,
  `INSERT INTO webhook_event_blocks (client_id, event, status, block, rows)
     SELECT client_id, event, status, seq / 4096, COUNT(*) FROM webhook_events
     GROUP BY 1, 2, 3, 4`,
  // An insert without seq (the service's) is numbered here and counted by the update trigger; a
  // bulk insert that brings its own seq (webhooks:seed) is counted by the insert trigger.
  `CREATE TRIGGER webhook_events_assign_seq AFTER INSERT ON webhook_events
     WHEN NEW.seq IS NULL BEGIN
     UPDATE webhook_events SET seq = (SELECT IFNULL(MAX(seq), 0) + 1 FROM webhook_events)
       WHERE rowid = NEW.rowid;
   END`,
  ...sqliteEventCountTriggers(eventBlock),
];

const SQLITE_DOWN = [
  `DROP TRIGGER webhook_events_count_deleted`,
  `DROP TRIGGER webhook_events_count_status`,
  `DROP TRIGGER webhook_events_count_numbered`,
  `DROP TRIGGER webhook_events_count_inserted`,
  `DROP TRIGGER webhook_events_assign_seq`,
  `DROP TABLE webhook_event_block_changes`,
  `DROP TABLE webhook_event_blocks`,
  `DROP INDEX "IDX_webhook_events_status_last_attempt_at"`,
  `DROP INDEX "IDX_webhook_events_client_id_seq"`,
  `CREATE INDEX "IDX_webhook_events_client_id_id" ON webhook_events (client_id, id)`,
  `DROP INDEX "UQ_webhook_events_seq"`,
  `ALTER TABLE webhook_events DROP COLUMN last_attempt_at`,
  `ALTER TABLE webhook_events DROP COLUMN seq`,
];

// Frozen copies of the helpers this migration used when it was written (row counters and
// position blocks of 4096 keys).

async function createRowCounter(runner: QueryRunner, table: string): Promise<void> {
  await runner.query(`DELETE FROM counters WHERE name = '${table}'`);
  await runner.query(
    `INSERT INTO counters (name, value) SELECT '${table}', COUNT(*) FROM ${table}`,
  );
  if (runner.connection.options.type === 'postgres') {
    for (const [event, rows, sign] of [
      ['INSERT', 'NEW', '+'],
      ['DELETE', 'OLD', '-'],
    ]) {
      const fn = `counters_${event.toLowerCase()}_${table}`;
      await runner.query(
        `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ` +
          `UPDATE counters SET value = value ${sign} (SELECT COUNT(*) FROM changed) WHERE name = '${table}'; ` +
          `RETURN NULL; END $$`,
      );
      await runner.query(
        `CREATE TRIGGER ${fn} AFTER ${event} ON ${table} REFERENCING ${rows} TABLE AS changed ` +
          `FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`,
      );
    }
    return;
  }
  for (const [event, sign] of [
    ['INSERT', '+'],
    ['DELETE', '-'],
  ]) {
    await runner.query(
      `CREATE TRIGGER counters_${event.toLowerCase()}_${table} AFTER ${event} ON ${table} ` +
        `BEGIN UPDATE counters SET value = value ${sign} 1 WHERE name = '${table}'; END`,
    );
  }
}

async function dropRowCounter(runner: QueryRunner, table: string): Promise<void> {
  const postgres = runner.connection.options.type === 'postgres';
  for (const event of ['insert', 'delete']) {
    const name = `counters_${event}_${table}`;
    await runner.query(`DROP TRIGGER IF EXISTS ${name}${postgres ? ` ON ${table}` : ''}`);
    if (postgres) await runner.query(`DROP FUNCTION IF EXISTS ${name}()`);
  }
  await runner.query(`DELETE FROM counters WHERE name = '${table}'`);
}

async function createPositionBlocks(runner: QueryRunner, table: string, key = 'id'): Promise<void> {
  await createCounts(runner, table, `${table}_blocks`, 'block', 4096, key);
}

async function createCounts(
  runner: QueryRunner,
  table: string,
  counts: string,
  column: string,
  size: number,
  key: string,
): Promise<void> {
  const postgres = runner.connection.options.type === 'postgres';
  await runner.query(
    `CREATE TABLE ${counts} (${column} ${postgres ? 'bigint' : 'integer'} PRIMARY KEY, rows bigint NOT NULL)`,
  );
  await runner.query(
    `INSERT INTO ${counts} (${column}, rows) SELECT ${key} / ${size}, COUNT(*) FROM ${table} GROUP BY 1`,
  );
  if (postgres) {
    await runner.query(
      `CREATE FUNCTION ${counts}_add() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         INSERT INTO ${counts} (${column}, rows) SELECT ${key} / ${size}, COUNT(*) FROM changed GROUP BY 1
         ON CONFLICT (${column}) DO UPDATE SET rows = ${counts}.rows + EXCLUDED.rows;
         RETURN NULL; END $$`,
    );
    await runner.query(
      `CREATE FUNCTION ${counts}_remove() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         UPDATE ${counts} b SET rows = b.rows - d.n
         FROM (SELECT ${key} / ${size} AS ${column}, COUNT(*) AS n FROM changed GROUP BY 1) d
         WHERE b.${column} = d.${column};
         RETURN NULL; END $$`,
    );
    await runner.query(
      `CREATE TRIGGER ${counts}_add AFTER INSERT ON ${table} REFERENCING NEW TABLE AS changed
         FOR EACH STATEMENT EXECUTE FUNCTION ${counts}_add()`,
    );
    await runner.query(
      `CREATE TRIGGER ${counts}_remove AFTER DELETE ON ${table} REFERENCING OLD TABLE AS changed
         FOR EACH STATEMENT EXECUTE FUNCTION ${counts}_remove()`,
    );
    return;
  }
  await runner.query(
    `CREATE TRIGGER ${counts}_add AFTER INSERT ON ${table} BEGIN
       INSERT INTO ${counts} (${column}, rows) VALUES (NEW.${key} / ${size}, 1)
       ON CONFLICT (${column}) DO UPDATE SET rows = rows + 1;
     END`,
  );
  await runner.query(
    `CREATE TRIGGER ${counts}_remove AFTER DELETE ON ${table} BEGIN
       UPDATE ${counts} SET rows = rows - 1 WHERE ${column} = OLD.${key} / ${size};
     END`,
  );
}

function dropPositionBlocks(runner: QueryRunner, table: string): Promise<void> {
  return dropCounts(runner, table, `${table}_blocks`);
}

async function dropCounts(runner: QueryRunner, table: string, counts: string): Promise<void> {
  const postgres = runner.connection.options.type === 'postgres';
  for (const name of [`${counts}_add`, `${counts}_remove`]) {
    await runner.query(`DROP TRIGGER IF EXISTS ${name}${postgres ? ` ON ${table}` : ''}`);
    if (postgres) await runner.query(`DROP FUNCTION IF EXISTS ${name}()`);
  }
  await runner.query(`DROP TABLE ${counts}`);
}
