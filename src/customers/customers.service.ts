import { Injectable } from '@nestjs/common';
import DataLoader from 'dataloader';
import { DataSource } from 'typeorm';
import { execute, select, sql, transact, type Work } from '../database/transact.js';
import { Page } from '../pagination/page.js';
import type { PageRequest } from '../pagination/page-query.dto.js';
import { blockStart, locate, toBlockCounts } from '../pagination/positions.js';
import type { CompanyType } from './company-type.js';
import { CustomerNotFoundException } from './customer-not-found.exception.js';
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

const RETURNING = 'RETURNING id, company_name, company_type';
const COLUMNS = 'SELECT id, company_name, company_type FROM customers';

/** The most customer reads one batched statement carries. */
const READ_BATCH_SIZE = 100;

type Row = Record<string, unknown>;

@Injectable()
export class CustomersService {
  /**
   * Reads by id that arrive in the same turn of the event loop (concurrent requests) go to the
   * database as one statement: one round trip to PostgreSQL, one read transaction on SQLite,
   * instead of one each. Batching only (no cache): each read is issued after its request arrived,
   * so it sees every write answered before that.
   */
  private readonly byId = new DataLoader<number, Row | null>((ids) => this.readBatch(ids), {
    cache: false,
    maxBatchSize: READ_BATCH_SIZE,
    batchScheduleFn: (run) => setImmediate(run),
  });

  constructor(private readonly dataSource: DataSource) {}

  /**
   * Ordered by id. The total and the page's place come from the per-block counts the database
   * keeps (pagination/positions.ts), read in the same snapshot as the page.
   */
  async list(request: PageRequest): Promise<Page<Customer>> {
    const db = this.dataSource;
    const { rows, total } = await transact(db, 'read', function* (): Work<{
      rows: Row[];
      total: number;
    }> {
      const blocks = yield sql(db, 'SELECT block, rows FROM customer_blocks ORDER BY block');
      const { total, start } = locate(toBlockCounts(blocks.rows), request.offset);
      if (!start) return { rows: [], total };
      const page = yield sql(
        db,
        `${COLUMNS} WHERE id >= :from ORDER BY id LIMIT :limit OFFSET :skip`,
        { from: blockStart(start.block), limit: request.limit, skip: start.skip },
      );
      return { rows: page.rows, total };
    });
    return new Page(
      rows.map((row) => this.toEntity(row)),
      total,
      request,
    );
  }

  /** The hottest read of the service (see BENCHMARKS.md): batched with concurrent reads. */
  async find(id: number): Promise<Customer> {
    const row = await this.byId.load(id);
    if (!row) throw new CustomerNotFoundException();
    return this.toEntity(row);
  }

  private async readBatch(ids: readonly number[]): Promise<(Row | null)[]> {
    const db = this.dataSource;
    // One text whatever the number of ids (one included), so that it is prepared once.
    const statement =
      db.options.type === 'postgres'
        ? sql(db, `${COLUMNS} WHERE id = ANY(:ids)`, { ids })
        : sql(db, `${COLUMNS} WHERE id IN (SELECT value FROM json_each(:ids))`, {
            ids: JSON.stringify(ids),
          });
    const rows = new Map((await select(db, statement)).map((row) => [Number(row.id), row]));
    return ids.map((id) => rows.get(id) ?? null);
  }

  /** One insert: the database counts it (customer_blocks) in the same statement's trigger. */
  async create(company: NewCompany): Promise<Customer> {
    const db = this.dataSource;
    const inserted = await execute(
      db,
      sql(
        db,
        `INSERT INTO customers (company_name, company_type) VALUES (:name, :type) ${RETURNING}`,
        {
          name: company.name,
          type: company.type,
        },
      ),
    );
    return this.toEntity(inserted.rows[0]);
  }

  /**
   * One UPDATE naming only the columns being changed: two concurrent updates of different
   * fields then both stick, which a read-modify-write of the whole row would not guarantee.
   * RETURNING answers the stored values after this update in the same statement.
   */
  async updateCompany(id: number, changes: CompanyChanges): Promise<Customer> {
    const assignments = [
      changes.name !== undefined && 'company_name = :name',
      changes.type !== undefined && 'company_type = :type',
    ].filter(Boolean);
    if (assignments.length === 0) return this.find(id);
    const result = await execute(
      this.dataSource,
      sql(
        this.dataSource,
        `UPDATE customers SET ${assignments.join(', ')} WHERE id = :id ${RETURNING}`,
        { id, name: changes.name ?? null, type: changes.type ?? null },
      ),
    );
    if (result.rows.length === 0) throw new CustomerNotFoundException();
    return this.toEntity(result.rows[0]);
  }

  private toEntity(row: Row): Customer {
    return Object.assign(new Customer(), {
      id: Number(row.id),
      companyName: row.company_name as string | null,
      companyType: row.company_type as CompanyType | null,
    });
  }
}
