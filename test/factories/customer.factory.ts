import type { CompanyType } from '../../src/customers/company-type.js';
import { Customer } from '../../src/customers/customer.entity.js';
import type { NewCompany } from '../../src/customers/customers.repository.js';
import { CustomersService } from '../../src/customers/customers.service.js';
import type { TestApp } from '../support/app.js';

/**
 * Customers made through the service, as POST /v2/customers makes them.
 * Defaults to a limited company; pass `{ name: null, type: null }` for a retail customer.
 */
export function createCustomer(t: TestApp, company: Partial<NewCompany> = {}): Promise<Customer> {
  return t.app.get(CustomersService).create({
    name: 'Acme Ltd',
    type: 'limited-company',
    ...company,
  });
}

/** `count` customers in id order; the n-th (from 1) is named `Company n`, every third retail. */
export async function createCustomers(t: TestApp, count: number): Promise<Customer[]> {
  const types: CompanyType[] = ['private', 'plc', 'charity'];
  const made: Customer[] = [];
  for (let n = 1; n <= count; n++) {
    made.push(
      await createCustomer(
        t,
        n % 3 === 0 ? { name: null, type: null } : { name: `Company ${n}`, type: types[n % 3] },
      ),
    );
  }
  return made;
}

/** The row as stored, read past the service. */
export function storedCustomer(t: TestApp, id: number): Promise<Customer | null> {
  return t.db.getRepository(Customer).findOneBy({ id });
}
