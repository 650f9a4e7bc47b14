import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { Database, InjectList, type PagedList } from '../database/index.js';
import type { Page } from '../pagination/page.js';
import type { PageRequest } from '../pagination/page-query.dto.js';
import type { CompanyType } from './company-type.js';
import { Customer } from './customer.entity.js';
import { customersList } from './customers.list.js';

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

/**
 * Every query of the `customers` table. Its list is declared (customers.list.ts): the database
 * keeps its rows counted per block of ids, and the list's total and any page's place come from
 * there (database/paged-list.ts).
 */
@Injectable()
export class CustomersRepository {
  private readonly byId: (id: number) => Promise<Customer | null>;

  constructor(
    private readonly db: Database,
    @InjectRepository(Customer) private readonly customers: Repository<Customer>,
    @InjectList(customersList) private readonly list: PagedList<Customer>,
  ) {
    this.byId = db.byKey(Customer);
  }

  /** The hottest read of the service (GET company): see Database.byKey(). */
  findById(id: number): Promise<Customer | null> {
    return this.byId(id);
  }

  /** Ordered by id; the total and the page read in one snapshot. */
  page(request: PageRequest): Promise<Page<Customer>> {
    return this.list.page(request);
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
    return this.list.total();
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
