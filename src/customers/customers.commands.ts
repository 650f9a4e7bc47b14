import { performance } from 'node:perf_hooks';
import { CliCommand, CliUsageError } from '../cli/cli-command.js';
import { ValidationFailedException } from '../common/exceptions/api.exception.js';
import { AppValidationPipe } from '../common/pipes/validation.pipe.js';
import { CustomerSeeder } from './customer-seeder.service.js';
import { CustomersService } from './customers.service.js';
import { NewCompanyDto } from './dto/create-customer.dto.js';
import { CustomerDto } from './dto/customer.dto.js';

const MAX_SEED_COUNT = 10_000_000;

export const customersCreateCommand: CliCommand = {
  name: 'customers:create',
  usage: 'customers:create [--name <name>] [--type <type>]',
  description: 'Creates a customer, with company details or (without flags) a retail one.',
  options: { name: { type: 'string' }, type: { type: 'string' } },
  flags: {
    name: 'The company name (1 to 255 characters).',
    type: 'The company type: undefined, private, sole-trader, limited-company, llp, partnership, plc, charity or local-authority.',
  },
  context: 'app',
  async run({ app, values }) {
    const company = await validCompany({ name: values.name, type: values.type });
    const customer = await app!
      .get(CustomersService)
      .create({ name: company.name ?? null, type: company.type ?? null });
    return CustomerDto.from(customer);
  },
};

export const customersSeedCommand: CliCommand = {
  name: 'customers:seed',
  usage: `customers:seed --count <1-${MAX_SEED_COUNT}>`,
  description:
    'Creates that many sample customers, "Company <n>" with a company type, every tenth retail (for trying out and benchmarks).',
  options: { count: { type: 'string' } },
  flags: { count: `How many customers to create (1 to ${MAX_SEED_COUNT}).` },
  context: 'app',
  async run({ app, values }) {
    const count = typeof values.count === 'string' ? Number(values.count) : NaN;
    if (!/^[1-9][0-9]*$/.test(String(values.count)) || count > MAX_SEED_COUNT) {
      throw new CliUsageError(`--count must be an integer from 1 to ${MAX_SEED_COUNT}.`);
    }
    const started = performance.now();
    const result = await app!.get(CustomerSeeder).seed(count);
    return { ...result, elapsed_ms: Math.round(performance.now() - started) };
  },
};

/** The same rules as POST /v2/customers; a refusal names the flag, as usage (exit 2). */
async function validCompany(input: Record<string, unknown>): Promise<NewCompanyDto> {
  try {
    return (await new AppValidationPipe().transform(input, {
      type: 'body',
      metatype: NewCompanyDto,
    })) as NewCompanyDto;
  } catch (error) {
    if (!(error instanceof ValidationFailedException)) throw error;
    const lines = Object.entries(error.errors).map(([field, messages]) => {
      return `--${field}: ${messages.join(' ')}`;
    });
    throw new CliUsageError(lines.join('\n'));
  }
}
