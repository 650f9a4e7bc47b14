import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { Database } from '../database/database.js';
import type { Row } from '../database/statement.js';
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

/**
 * Every query of the `customers` table. The database keeps its rows counted per block of ids
 * (`customers_blocks`, database/position-blocks.ts): the list's total and any page's place come
 * from there (pagination/positions.ts).
 */
@Injectable()
export class CustomersRepository {
  /** Every customer by id, placed by the counts the database keeps. */
  private readonly pages: PageReader;

  constructor(
    private readonly db: Database,
    @InjectRepository(Customer) private readonly customers: Repository<Customer>,
  ) {
    this.pages = pageReader(db, wholeTable(TABLE, 'id, company_name, company_type'));
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

  /** Writes go through Database.transaction(): on SQLite they take turns on the one writer. */
  async insert(company: NewCompany): Promise<Customer> {
    const customer = this.customers.create({
      companyName: company.name,
      companyType: company.type,
    });
    await this.db.transaction((manager) => manager.insert(Customer, customer));
    return customer;
  }

  /** Inserts many customers in one transaction, with multi-row INSERTs. */
  async insertMany(companies: SampleCompany[]): Promise<void> {
    await this.db.transaction(async (manager) => {
      for (let i = 0; i < companies.length; i += ROWS_PER_INSERT) {
        const rows = companies
          .slice(i, i + ROWS_PER_INSERT)
          .map(([companyName, companyType]) => ({ companyName, companyType }));
        await manager
          .createQueryBuilder()
          .insert()
          .into(Customer)
          .values(rows)
          .updateEntity(false)
          .execute();
      }
    });
  }

  /** The exact number of customers (a sum of block counts, not a COUNT). */
  count(): Promise<number> {
    return countByBlocks(this.db, TABLE);
  }

  /**
   * Writes only the fields being changed, so that two concurrent updates of different fields both
   * stick (a read-modify-write of the whole row would lose one), and answers the stored values
   * after this update. Null when no customer has that id.
   */
  updateCompany(id: number, changes: CompanyChanges): Promise<Customer | null> {
    return this.db.update(Customer, id, { companyName: changes.name, companyType: changes.type });
  }
}

/** 2 parameters a row: 10,000 parameters, inside both SQLite's and PostgreSQL's limits. */
const ROWS_PER_INSERT = 5_000;

function toCustomer(row: Row): Customer {
  return Object.assign(new Customer(), {
    id: Number(row.id),
    companyName: row.company_name as string | null,
    companyType: row.company_type as CompanyType | null,
  });
}
