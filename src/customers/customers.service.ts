import { Injectable } from '@nestjs/common';
import type { Page } from '../pagination/page.js';
import type { PageRequest } from '../pagination/page-query.dto.js';
import { CustomerNotFoundException } from './customer-not-found.exception.js';
import type { Customer } from './customer.entity.js';
import {
  type CompanyChanges,
  CustomersRepository,
  type NewCompany,
} from './customers.repository.js';

/** Customers and their company details (CONTRACT §5); queries live in CustomersRepository. */
@Injectable()
export class CustomersService {
  constructor(private readonly customers: CustomersRepository) {}

  list(request: PageRequest): Promise<Page<Customer>> {
    return this.customers.page(request);
  }

  async find(id: number): Promise<Customer> {
    const customer = await this.customers.findById(id);
    if (!customer) throw new CustomerNotFoundException();
    return customer;
  }

  create(company: NewCompany): Promise<Customer> {
    return this.customers.insert(company);
  }

  /** Changes only the fields given; with none, answers the stored values. */
  async updateCompany(id: number, changes: CompanyChanges): Promise<Customer> {
    if (changes.name === undefined && changes.type === undefined) return this.find(id);
    const customer = await this.customers.updateCompany(id, changes);
    if (!customer) throw new CustomerNotFoundException();
    return customer;
  }
}
