import 'reflect-metadata';

// Quiet by default; TEST_LOG_LEVEL=debug npm test shows the service's logs.
process.env.LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? 'silent';
