import { jest } from '@jest/globals';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ROOT, runNode } from './processes.js';

jest.setTimeout(60000);

/**
 * The test environment (test/support/environment.mjs): a child process a test file leaves running
 * is killed when the file ends, and named on stderr. Without it the child keeps Jest from exiting
 * ("Jest did not exit one second after the test run has completed"): runNode kills that Jest after
 * its timeout and the exit code is not 0.
 */
describe('test environment', () => {
  it('stops a child process a test file left running, so that Jest exits', async () => {
    const pidFile = join(mkdtempSync(join(tmpdir(), 'environment-test-')), 'pid');
    const fixture = resolve(ROOT, 'test/support/fixtures/leaves-a-child.fixture.ts');
    const { code, stderr } = await runNode(
      'node_modules/jest/bin/jest.js',
      ['--ci', '--testMatch', fixture],
      { NODE_OPTIONS: '--experimental-vm-modules', FIXTURE_PID_FILE: pidFile },
      30000,
      ROOT,
    );

    expect(code).toBe(0);
    expect(stderr).toContain('1 passed, 1 total');
    expect(stderr).toContain(`${fixture}: stopping 1 child process(es) it left running`);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(pid).toBeGreaterThan(0);
    // Gone (killed and reaped), not merely orphaned.
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  });
});
