import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { select, sql, type Statement, transact } from '../database/transact.js';
import { COMPANY_TYPES } from './company-type.js';

/** 2 parameters a row: 10,000 parameters, inside both SQLite's and PostgreSQL's limits. */
const ROWS_PER_INSERT = 5_000;
/** Big transactions make few commits; small enough that a failure loses little. */
const ROWS_PER_TRANSACTION = 50_000;

export interface SeedResult {
  created: number;
  total: number;
}

/**
 * Bulk-inserts sample customers (the benchmark seeds 1,000,000): multi-row INSERTs, many per
 * transaction (the database counts them: customer_blocks). One in ten is a retail customer (no
 * company).
 */
@Injectable()
export class CustomerSeeder {
  constructor(private readonly dataSource: DataSource) {}

  async seed(count: number): Promise<SeedResult> {
    const db = this.dataSource;
    let created = 0;
    let next = (await this.total()) + 1;
    while (created < count) {
      const rows = Math.min(ROWS_PER_TRANSACTION, count - created);
      const first = next;
      await transact(db, 'write', function* () {
        for (let done = 0; done < rows; done += ROWS_PER_INSERT) {
          yield insertSample(db, first + done, Math.min(ROWS_PER_INSERT, rows - done));
        }
      });
      created += rows;
      next += rows;
    }
    return { created, total: await this.total() };
  }

  private async total(): Promise<number> {
    const db = this.dataSource;
    const [row] = await select(db, sql(db, 'SELECT SUM(rows) AS total FROM customer_blocks'));
    return Number(row?.total ?? 0);
  }
}

/** `rows` sample customers numbered from `first` (numbers, not ids: they name the companies). */
function insertSample(db: DataSource, first: number, rows: number): Statement {
  // Positional placeholders built directly: named ones cost a regex pass over 10,000 of them.
  const values: string[] = [];
  const params: (string | null)[] = [];
  const placeholder = () => db.driver.createParameter('p', params.length - 1);
  for (let i = 0; i < rows; i++) {
    const n = first + i;
    const retail = n % 10 === 0;
    params.push(retail ? null : `Company ${n}`);
    const name = placeholder();
    params.push(retail ? null : COMPANY_TYPES[n % COMPANY_TYPES.length]);
    values.push(`(${name}, ${placeholder()})`);
  }
  return {
    sql: `INSERT INTO customers (company_name, company_type) VALUES ${values.join(', ')}`,
    params,
  };
}
