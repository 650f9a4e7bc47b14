import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { Database } from '../database/database.js';
import type { Row, Statement } from '../database/statement.js';
import { eachAlone, type Outcome, outcomeOf } from '../database/turn-batch.js';
import { Page } from '../pagination/page.js';
import type { PageRequest } from '../pagination/page-query.dto.js';
import { countByBlocks, type PageReader, pageReader, wholeTable } from '../pagination/positions.js';
import type { CompanyType } from './company-type.js';
import { Customer } from './customer.entity.js';

export interface NewCompany {
  name: string | null;
  type: CompanyType | null;
}

/** The company fields to change; a field left undefined keeps its stored value. */
export interface CompanyChanges {
  name?: string | null;
  type?: CompanyType;
}

/** One sample customer of CustomersRepository.insertMany(). */
export type SampleCompany = [name: string | null, type: CompanyType | null];

const TABLE = 'customers';
const RETURNING = 'RETURNING id, company_name, company_type';
/** The most company updates one batched statement carries (PostgreSQL). */
const UPDATE_BATCH_SIZE = 100;

/** A PUT's update, waiting for the others of its turn. */
interface CompanyUpdate {
  id: number;
  changes: CompanyChanges;
}

/**
 * Several customers' updates in one statement (PostgreSQL): a field a row does not change is
 * set to its current value, which the UPDATE reads under the row's lock, so a concurrent
 * update of that field is kept. One text whatever the number of rows (prepared once).
 */
const UPDATE_MANY = `UPDATE customers AS c SET
    company_name = CASE WHEN u.set_name THEN u.name ELSE c.company_name END,
    company_type = CASE WHEN u.set_type THEN u.type ELSE c.company_type END
  FROM unnest(CAST(:ids AS integer[]), CAST(:set_names AS boolean[]), CAST(:names AS varchar[]),
      CAST(:set_types AS boolean[]), CAST(:types AS varchar[]))
    AS u(id, set_name, name, set_type, type)
  WHERE c.id = u.id
  RETURNING c.id, c.company_name, c.company_type`;

/**
 * Every query of the `customers` table. The database keeps its rows counted per block of ids
 * (`customers_blocks`, database/position-blocks.ts): the list's total and any page's place come
 * from there (pagination/positions.ts).
 */
@Injectable()
export class CustomersRepository {
  /**
   * PostgreSQL: updates that arrive in the same turn of the event loop (or while the batch
   * before is out) go as one statement, one round trip and one commit, instead of one each
   * (Database.batchedWrites(), docs/benchmarks.md). SQLite already shares one commit between the
   * statements of a turn (Database.execute()).
   */
  private readonly updates: (update: CompanyUpdate) => Promise<Row | null>;

  /** Every customer by id, placed by the counts the database keeps. */
  private readonly pages: PageReader;

  constructor(
    private readonly db: Database,
    @InjectRepository(Customer) private readonly customers: Repository<Customer>,
  ) {
    this.pages = pageReader(db, wholeTable(TABLE, 'id, company_name, company_type'));
    this.updates = db.batchedWrites((batch) => this.updateBatch(batch), UPDATE_BATCH_SIZE);
  }

  /** Committed data only: outside a transaction, TypeORM's reads go to SQLite's reader. */
  findById(id: number): Promise<Customer | null> {
    return this.customers.findOneBy({ id });
  }

  /** Ordered by id; the total and the page read in one snapshot. */
  async page(request: PageRequest): Promise<Page<Customer>> {
    const { rows, total } = await this.pages(request);
    return new Page(rows.map(toCustomer), total, request);
  }

  async insert(company: NewCompany): Promise<Customer> {
    const statement = this.db.sql(
      `INSERT INTO customers (company_name, company_type) VALUES (:name, :type) ${RETURNING}`,
      { name: company.name, type: company.type },
    );
    const row = await this.db.write(function* () {
      return (yield statement).rows[0];
    });
    return toCustomer(row);
  }

  /** Inserts many customers in one transaction, with multi-row INSERTs. */
  async insertMany(companies: SampleCompany[]): Promise<void> {
    const statements: Statement[] = [];
    for (let i = 0; i < companies.length; i += ROWS_PER_INSERT) {
      statements.push(this.multiRowInsert(companies.slice(i, i + ROWS_PER_INSERT)));
    }
    await this.db.write(function* () {
      for (const statement of statements) yield statement;
    });
  }

  /** The exact number of customers (a sum of block counts, not a COUNT). */
  count(): Promise<number> {
    return countByBlocks(this.db, TABLE);
  }

  /**
   * One UPDATE naming only the columns being changed: two concurrent updates of different
   * fields then both stick, which a read-modify-write of the whole row would not guarantee.
   * RETURNING answers the stored values after this update in the same statement. Null when no
   * customer has that id.
   */
  async updateCompany(id: number, changes: CompanyChanges): Promise<Customer | null> {
    const row =
      this.db.dialect === 'postgres'
        ? await this.updates({ id, changes })
        : await this.updateOne({ id, changes });
    return row && toCustomer(row);
  }

  private async updateOne({ id, changes }: CompanyUpdate): Promise<Row | null> {
    const assignments = [
      changes.name !== undefined && 'company_name = :name',
      changes.type !== undefined && 'company_type = :type',
    ].filter(Boolean);
    const result = await this.db.execute(
      this.db.sql(`UPDATE customers SET ${assignments.join(', ')} WHERE id = :id ${RETURNING}`, {
        id,
        name: changes.name ?? null,
        type: changes.type ?? null,
      }),
    );
    return result.rows[0] ?? null;
  }

  /**
   * One statement per round of the batch: an id named twice in one UPDATE would be updated
   * once, so each later update of an id goes in a later round, in the order they arrived. If a
   * statement fails, its updates go one by one, so that only a failing one fails.
   */
  private async updateBatch(batch: CompanyUpdate[]): Promise<Outcome<Row | null>[]> {
    if (batch.length === 1) return [await outcomeOf(this.updateOne(batch[0]))];
    const outcomes: Outcome<Row | null>[] = [];
    for (const round of rounds(batch)) {
      // In id order, so that two batches in flight at once (two connections, two instances)
      // lock shared rows in the same order (PostgreSQL joins a small array row by row, in its
      // order); a deadlock that still happens aborts one statement, retried one by one below.
      round.sort((a, b) => batch[a].id - batch[b].id);
      const updates = round.map((i) => batch[i]);
      const together = await outcomeOf(
        this.db.execute(
          this.db.sql(UPDATE_MANY, {
            ids: updates.map((u) => u.id),
            set_names: updates.map((u) => u.changes.name !== undefined),
            names: updates.map((u) => u.changes.name ?? null),
            set_types: updates.map((u) => u.changes.type !== undefined),
            types: updates.map((u) => u.changes.type ?? null),
          }),
        ),
      );
      let settled: Outcome<Row | null>[];
      if ('value' in together) {
        const rows = new Map(together.value.rows.map((row) => [Number(row.id), row]));
        settled = updates.map((u) => ({ value: rows.get(u.id) ?? null }));
      } else {
        settled = await eachAlone(updates, together.error, (u) => this.updateOne(u));
      }
      round.forEach((i, k) => (outcomes[i] = settled[k]));
    }
    return outcomes;
  }

  private multiRowInsert(companies: SampleCompany[]): Statement {
    const values: string[] = [];
    const params: (string | null)[] = [];
    for (const [name, type] of companies) {
      values.push(`(${this.db.parameter(params.length)}, ${this.db.parameter(params.length + 1)})`);
      params.push(name, type);
    }
    return {
      sql: `INSERT INTO customers (company_name, company_type) VALUES ${values.join(', ')}`,
      params,
    };
  }
}

/** 2 parameters a row: 10,000 parameters, inside both SQLite's and PostgreSQL's limits. */
const ROWS_PER_INSERT = 5_000;

/** The batch's indexes in rounds: the n-th update of an id in round n. */
function rounds(batch: CompanyUpdate[]): number[][] {
  const result: number[][] = [];
  const seen = new Map<number, number>();
  batch.forEach(({ id }, i) => {
    const round = seen.get(id) ?? 0;
    seen.set(id, round + 1);
    (result[round] ??= []).push(i);
  });
  return result;
}

function toCustomer(row: Row): Customer {
  return Object.assign(new Customer(), {
    id: Number(row.id),
    companyName: row.company_name as string | null,
    companyType: row.company_type as CompanyType | null,
  });
}
