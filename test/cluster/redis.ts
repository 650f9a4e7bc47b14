/**
 * The Redis the cluster tests use: TEST_REDIS_URL's server (default 127.0.0.1:6379) with the given
 * database number, so that test files (and another run using database 0) stay apart.
 */
export function testRedisUrl(db: number): string {
  const url = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
  url.pathname = `/${db}`;
  return url.toString();
}
