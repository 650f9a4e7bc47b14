import { jest } from '@jest/globals';
import { createTestDatabase, TestDatabase } from '../support/database.js';
import { freePort, runNode } from '../support/processes.js';
import { testRedisUrl } from './redis.js';

jest.setTimeout(60000);

/**
 * REDIS_URL names a database this Redis does not have: ioredis would go on with database 0,
 * sharing counters with whatever else uses it. The start is refused instead, naming the variable.
 */
describe('REDIS_URL with a database Redis does not have', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('refuses to start, naming the variable and the database', async () => {
    const result = await runNode('dist/src/main.js', [], {
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl(999999),
      PORT: String(await freePort()),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'Invalid configuration: REDIS_URL names Redis database 999999, which this Redis does not have',
    );
    // That one line alone: no log line before it saying the service goes on without Redis.
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stdout).not.toContain('Redis is not used');
  });
});
