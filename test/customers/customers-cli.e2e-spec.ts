import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/index.js';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { runNode } from '../support/processes.js';

/** The built CLI (dist/; `npx nest build` first when running this file alone). */
describe('CLI: customers:create and customers:seed', () => {
  let database: TestDatabase;
  const cli = (...args: string[]) =>
    runNode('dist/src/cli.js', args, { DATABASE_URL: database.url }, 60000);

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  async function stored(): Promise<{ rows: number; counter: number; sample: unknown[] }> {
    const db = new DataSource(buildDataSourceOptions({ url: database.url }));
    await db.initialize();
    try {
      const [{ n }] = await db.query('SELECT COUNT(*) AS n FROM customers');
      const [{ value }] = await db.query(`SELECT SUM(rows) AS value FROM customers_blocks`);
      const sample = await db.query(
        'SELECT id, company_name, company_type FROM customers WHERE id IN (3, 10, 13, 50003) ORDER BY id',
      );
      return { rows: Number(n), counter: Number(value), sample };
    } finally {
      await db.destroy();
    }
  }

  it('customers:create prints the new customer as one JSON object', async () => {
    const company = await cli(
      'customers:create',
      '--name',
      'Acme Ltd',
      '--type',
      'limited-company',
    );
    expect(company.stderr).toBe('');
    expect(company.code).toBe(0);
    expect(company.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(company.stdout)).toStrictEqual({
      id: 1,
      company: { name: 'Acme Ltd', type: 'limited-company' },
    });

    const retail = await cli('customers:create');
    expect(retail.code).toBe(0);
    expect(JSON.parse(retail.stdout)).toStrictEqual({ id: 2, company: { name: null, type: null } });
  });

  it.each([
    [['--type', 'ltd'], /--type: The type must be one of: undefined, private/],
    [['--name', ''], /--name: The name must be between 1 and 255 characters\./],
    [['--street', 'Main St'], /street/],
  ])('customers:create %j is refused with usage and exit 2', async (args, message) => {
    const result = await cli('customers:create', ...args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/Usage: npm run cli -- customers:create/);
  });

  // 50,001: more than one transaction (50,000 rows each) and a partly filled last INSERT.
  it('customers:seed inserts N customers, counted, in batches', async () => {
    const result = await cli('customers:seed', '--count', '50001');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out).toStrictEqual({ created: 50001, total: 50003, elapsed_ms: expect.any(Number) });

    const { rows, counter, sample } = await stored();
    expect(rows).toBe(50003);
    expect(counter).toBe(50003);
    // Seeded customers are numbered after the existing ones; every tenth is retail.
    expect(sample).toEqual([
      { id: 3, company_name: 'Company 3', company_type: 'limited-company' },
      { id: 10, company_name: null, company_type: null },
      { id: 13, company_name: 'Company 13', company_type: 'llp' },
      { id: 50003, company_name: 'Company 50003', company_type: 'local-authority' },
    ]);
  });

  it.each([[[]], [['--count', '1.5']], [['--count', '10000001']]])(
    'customers:seed %j is refused with usage and exit 2',
    async (args) => {
      const result = await cli('customers:seed', ...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/--count must be an integer from 1 to 10000000/);
    },
  );
});
