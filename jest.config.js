import { readFileSync } from 'node:fs';

const swc = JSON.parse(readFileSync(new URL('./.swcrc', import.meta.url), 'utf8'));

const REQUIRED_ESM = ['content-disposition'];

/** @type {import('jest').Config} */
export default {
  rootDir: '.',
  // Node's environment, stopping child processes a test file left running (test/support).
  testEnvironment: '<rootDir>/test/support/environment.mjs',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { ...swc, swcrc: false }],
    // Node 20 lets CommonJS packages require() ESM-only ones; jest's loader does not, so the few
    // ESM-only packages that CommonJS dependencies require are compiled to CommonJS here.
    [`/node_modules/(${REQUIRED_ESM.join('|')})/.+\\.js$`]: [
      '@swc/jest',
      { swcrc: false, module: { type: 'commonjs' } },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${REQUIRED_ESM.join('|')})/)`],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  setupFiles: ['<rootDir>/test/support/setup-env.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/support/log-audit.ts'],
  testTimeout: 30000,
  maxWorkers: process.env.CI ? 2 : '50%',
};
