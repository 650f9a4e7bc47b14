import { Table, TableIndex, type QueryRunner } from 'typeorm';

/*
 * FROZEN: migrations call this file, and a migration must do today what it did when it was
 * released. Never edit it (list-counts-v1.spec.ts pins its sha256): make list-counts-v2.ts
 * instead, and let new migrations call that.
 */

/** The counts of one paged list, as its migration declares them (plain names: frozen text). */
export interface ListCountsV1 {
  /** The list's table. */
  table: string;
  /** The integer column the list is ordered by; rows where it is null are not counted. */
  key: string;
  /**
   * The NOT NULL columns counted per value (the scope column first, then the filters): a page of
   * any combination of them is placed in these counts.
   */
  columns?: string[];
  /** The prefix of the counting tables (default: `table`): `<counts>_blocks`, `_superblocks`. */
  counts?: string;
  /**
   * PostgreSQL: triggers append each statement's changes to `<counts>_block_changes` instead of
   * updating count rows, so that concurrent writers never queue on a count row's lock; the
   * application folds the changes into the counts (DatabaseModule). SQLite has one writer and
   * always updates the counts in place.
   */
  appendChanges?: boolean;
}

/** Keys per block, and blocks per superblock: written into the triggers. */
const BLOCK = 4096;
const SUPERBLOCK = BLOCK * 64;

/**
 * Creates `<counts>_blocks(<columns>, block, rows)` and `<counts>_superblocks(<columns>,
 * superblock, rows)`, counted from the rows already there, and the triggers that keep them exact
 * on every insert, update and delete, in the writing transaction, on SQLite and PostgreSQL.
 */
export async function createListCountsV1(runner: QueryRunner, list: ListCountsV1): Promise<void> {
  const { table, key } = list;
  const columns = list.columns ?? [];
  const counts = list.counts ?? table;
  const postgres = runner.connection.options.type === 'postgres';
  const source = await runner.getTable(table);
  if (!source) throw new Error(`createListCountsV1: no table ${table}`);
  const counted = columns.map((name) => {
    const column = source.findColumnByName(name);
    if (!column) throw new Error(`createListCountsV1: no column ${table}.${name}`);
    if (column.isNullable) throw new Error(`createListCountsV1: ${table}.${name} may be null`);
    return { name, type: column.type, length: column.length, isPrimary: true };
  });
  const integer = postgres ? 'bigint' : 'integer';
  const countTable = (name: string, level: string) =>
    new Table({
      name,
      columns: [
        ...counted,
        { name: level, type: integer, isPrimary: true },
        { name: 'rows', type: 'bigint' },
      ],
    });
  const changesTable = (name: string) =>
    new Table({
      name,
      columns: [
        {
          name: 'id',
          type: integer,
          isPrimary: true,
          isGenerated: true,
          generationStrategy: 'increment',
        },
        ...counted.map((column) => ({ ...column, isPrimary: false })),
        { name: 'block', type: integer },
        { name: 'rows', type: 'bigint' },
      ],
    });
  await runner.createTable(countTable(`${counts}_blocks`, 'block'));
  await runner.createTable(countTable(`${counts}_superblocks`, 'superblock'));
  if (columns.length > 0) {
    // The blocks of one superblock are read by range whatever the filter.
    await runner.createIndex(
      `${counts}_blocks`,
      new TableIndex({
        name: `IDX_${counts}_blocks_${columns[0]}_block`,
        columnNames: [columns[0], 'block'],
      }),
    );
  }
  if (list.appendChanges) await runner.createTable(changesTable(`${counts}_block_changes`));

  const names = [...columns, ''].join(', ');
  await runner.query(
    `INSERT INTO ${counts}_blocks (${names}block, rows)
     SELECT ${names}${key} / ${BLOCK}, COUNT(*) FROM ${table} WHERE ${key} IS NOT NULL
     GROUP BY ${names}${key} / ${BLOCK}`,
  );
  await runner.query(
    `INSERT INTO ${counts}_superblocks (${names}superblock, rows)
     SELECT ${names}block / 64, SUM(rows) FROM ${counts}_blocks GROUP BY ${names}block / 64`,
  );
  const statements = postgres
    ? postgresTriggers(table, key, columns, counts, !!list.appendChanges)
    : sqliteTriggers(table, key, columns, counts);
  for (const statement of statements) await runner.query(statement);
}

/** Undoes createListCountsV1(). */
export async function dropListCountsV1(runner: QueryRunner, list: ListCountsV1): Promise<void> {
  const counts = list.counts ?? list.table;
  const postgres = runner.connection.options.type === 'postgres';
  for (const change of ['inserted', 'deleted', 'updated']) {
    const name = `${counts}_counts_${change}`;
    await runner.query(`DROP TRIGGER IF EXISTS ${name}${postgres ? ` ON ${list.table}` : ''}`);
    if (postgres) await runner.query(`DROP FUNCTION IF EXISTS ${name}()`);
  }
  if (list.appendChanges) await runner.dropTable(`${counts}_block_changes`);
  await runner.dropTable(`${counts}_superblocks`);
  await runner.dropTable(`${counts}_blocks`);
}

/**
 * SQLite: row triggers move both levels by one. An update counts when the key or a counted
 * column changes (a key given after the insert counts then).
 */
function sqliteTriggers(table: string, key: string, columns: string[], counts: string): string[] {
  const move = (row: 'NEW' | 'OLD', by: number) =>
    [
      ['blocks', 'block', BLOCK],
      ['superblocks', 'superblock', SUPERBLOCK],
    ]
      .map(
        ([level, column, size]) =>
          `INSERT INTO ${counts}_${level} (${[...columns, column, 'rows'].join(', ')})
           SELECT ${[...columns.map((c) => `${row}.${c}`), `${row}.${key} / ${size}`, by].join(', ')}
           WHERE ${row}.${key} IS NOT NULL
           ON CONFLICT (${[...columns, column].join(', ')}) DO UPDATE SET rows = rows + excluded.rows;`,
      )
      .join('\n');
  const changed = [key, ...columns].map((c) => `OLD.${c} IS NOT NEW.${c}`).join(' OR ');
  return [
    `CREATE TRIGGER ${counts}_counts_inserted AFTER INSERT ON ${table} BEGIN ${move('NEW', 1)} END`,
    `CREATE TRIGGER ${counts}_counts_deleted AFTER DELETE ON ${table} BEGIN ${move('OLD', -1)} END`,
    `CREATE TRIGGER ${counts}_counts_updated AFTER UPDATE OF ${[key, ...columns].join(', ')}
     ON ${table} WHEN ${changed} BEGIN ${move('OLD', -1)} ${move('NEW', 1)} END`,
  ];
}

/**
 * PostgreSQL: statement triggers with transition tables, one aggregated row per block and value
 * per statement (bulk writes stay fast). They either update both levels (rows upserted in key
 * order, so two writers cannot deadlock on them) or append the changes (appendChanges).
 */
function postgresTriggers(
  table: string,
  key: string,
  columns: string[],
  counts: string,
  append: boolean,
): string[] {
  const names = [...columns, ''].join(', ');
  const signed = (rows: string, sign: string) =>
    `SELECT ${names}${key}, ${sign}1 AS n FROM ${rows} WHERE ${key} IS NOT NULL`;
  const sources: Record<string, string> = {
    inserted: signed('new_rows', ''),
    deleted: signed('old_rows', '-'),
    updated: `${signed('old_rows', '-')} UNION ALL ${signed('new_rows', '')}`,
  };
  const statements: string[] = [];
  for (const [change, moved] of Object.entries(sources)) {
    const perBlock = `SELECT ${names}${key} / ${BLOCK} AS block, SUM(n) AS rows FROM (${moved}) moved
      GROUP BY ${names}${key} / ${BLOCK} HAVING SUM(n) <> 0`;
    const body = append
      ? `INSERT INTO ${counts}_block_changes (${names}block, rows) ${perBlock};`
      : [
          ['blocks', 'block', 'block'],
          ['superblocks', 'superblock', 'block / 64'],
        ]
          .map(
            ([level, column, expression]) =>
              `INSERT INTO ${counts}_${level} (${names}${column}, rows)
               SELECT ${names}${expression}, SUM(rows) FROM (${perBlock}) per_block
               GROUP BY ${names}${expression} ORDER BY ${names}${expression}
               ON CONFLICT (${names}${column}) DO UPDATE SET rows = ${counts}_${level}.rows + EXCLUDED.rows;`,
          )
          .join('\n');
    const tables = {
      inserted: 'NEW TABLE AS new_rows',
      deleted: 'OLD TABLE AS old_rows',
      updated: 'OLD TABLE AS old_rows NEW TABLE AS new_rows',
    }[change];
    const event = { inserted: 'INSERT', deleted: 'DELETE', updated: 'UPDATE' }[change];
    statements.push(
      `CREATE FUNCTION ${counts}_counts_${change}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN ${body} RETURN NULL; END $$`,
      `CREATE TRIGGER ${counts}_counts_${change} AFTER ${event} ON ${table} REFERENCING ${tables}
       FOR EACH STATEMENT EXECUTE FUNCTION ${counts}_counts_${change}()`,
    );
  }
  return statements;
}
