import { Injectable } from '@nestjs/common';
import { COMPANY_TYPES } from './company-type.js';
import { CustomersRepository, type SampleCompany } from './customers.repository.js';

/** Big transactions make few commits; small enough that a failure loses little. */
const ROWS_PER_TRANSACTION = 50_000;

export interface SeedResult {
  created: number;
  total: number;
}

/**
 * Bulk-inserts sample customers (the benchmark seeds 1,000,000), many per transaction. One in
 * ten is a retail customer (no company).
 */
@Injectable()
export class CustomerSeeder {
  constructor(private readonly customers: CustomersRepository) {}

  async seed(count: number): Promise<SeedResult> {
    let created = 0;
    let next = (await this.customers.count()) + 1;
    while (created < count) {
      const rows = Math.min(ROWS_PER_TRANSACTION, count - created);
      await this.customers.insertMany(samples(next, rows));
      created += rows;
      next += rows;
    }
    return { created, total: await this.customers.count() };
  }
}

/** `rows` sample companies numbered from `first` (numbers, not ids: they name the companies). */
function samples(first: number, rows: number): SampleCompany[] {
  return Array.from({ length: rows }, (_, i): SampleCompany => {
    const n = first + i;
    return n % 10 === 0 ? [null, null] : [`Company ${n}`, COMPANY_TYPES[n % COMPANY_TYPES.length]];
  });
}
