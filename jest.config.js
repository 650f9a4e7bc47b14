import { readFileSync } from 'node:fs';

const swc = JSON.parse(readFileSync(new URL('./.swcrc', import.meta.url), 'utf8'));

/** @type {import('jest').Config} */
export default {
  rootDir: '.',
  // Node's environment, stopping child processes a test file left running (test/support).
  testEnvironment: '<rootDir>/test/support/environment.mjs',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { ...swc, swcrc: false }],
  },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  setupFiles: ['<rootDir>/test/support/setup-env.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/support/log-audit.ts'],
  testTimeout: 30000,
  maxWorkers: process.env.CI ? 2 : '50%',
  // Under --experimental-vm-modules, Node 20 never frees a test file's ES modules (vm module
  // wraps stay in global handles), so a worker's heap grows by 50-100 MB per file. A worker is
  // replaced once its heap passes 400 MB; at its end, tearing down what is left takes Node
  // 200-520 ms on two busy cores, which Jest's default 500 ms grace reported as "a worker failed
  // to exit gracefully" with no handle open. A worker holding a real handle never exits and is
  // still reported, after 3 s.
  workerIdleMemoryLimit: '400MB',
  workerGracefulExitTimeout: 3000,
};
