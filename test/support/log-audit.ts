import { afterAll, beforeAll } from '@jest/globals';
import { Writable } from 'node:stream';
import { useLogStream } from '../../src/config/logger.config.js';

/**
 * Every e2e file's in-process logs are captured (at debug level unless TEST_LOG_LEVEL says
 * otherwise) and must hold no credential: no JWT, no bearer token, no unredacted secret field.
 * Files that read their own lines take them from capturedLogs(); one that captures logs itself
 * (test/auth/logs.e2e-spec.ts, at trace level) replaces the stream meanwhile.
 */
const CREDENTIALS: [string, RegExp][] = [
  ['a JWT', /eyJ[\w-]{5,}\.eyJ[\w-]{5,}\.[\w-]{10,}/],
  ['a bearer token', /Bearer\s+[\w-]{8,}/i],
  [
    'a secret field',
    /"(client_secret|password|access_token|token|refresh_token)":"(?!\[redacted\])/i,
  ],
];

let captured = '';

/** Everything this file's in-process apps have logged so far, for tests that read their lines. */
export function capturedLogs(): string {
  return captured;
}

beforeAll(() => {
  if (!process.env.TEST_LOG_LEVEL) process.env.LOG_LEVEL = 'debug';
  useLogStream(
    new Writable({
      write(chunk, _encoding, done) {
        captured += String(chunk);
        done();
      },
    }),
  );
});

afterAll(() => {
  useLogStream(undefined);
  for (const [what, pattern] of CREDENTIALS) {
    const found = pattern.exec(captured);
    if (found) {
      const at = captured.lastIndexOf('\n', found.index) + 1;
      throw new Error(`${what} reached the logs: ${captured.slice(at, at + 200)}…`);
    }
  }
});
