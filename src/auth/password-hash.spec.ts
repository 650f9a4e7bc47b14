import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { hashPassword, stopPasswordThreads, verifyPassword } from './password-hash.js';

/** The process's threads, as Linux counts them (a hashing thread is one). */
const threads = () =>
  Number(/Threads:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]);

describe('password hashing (scrypt)', () => {
  it('stores a salted, self-describing scrypt hash that verifies only the password', async () => {
    const stored = await hashPassword('correct horse');
    expect(stored).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]{43}$/);
    expect(stored).not.toContain('correct horse');
    expect(await hashPassword('correct horse')).not.toBe(stored);
    await expect(verifyPassword('correct horse', stored)).resolves.toBe(true);
    await expect(verifyPassword('correct horsf', stored)).resolves.toBe(false);
  });

  it('refuses an unknown user after doing the same work', async () => {
    await expect(verifyPassword('anything', undefined)).resolves.toBe(false);
    await expect(verifyPassword('anything', 'not-a-hash')).resolves.toBe(false);
  });

  it('does not block the event loop while hashing', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    await Promise.all([hashPassword('a'), hashPassword('b'), hashPassword('c')]);
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(0);
  });

  it('answers each of several concurrent hashes with its own result', async () => {
    const passwords = ['one', 'two', 'three', 'four'];
    const stored = await Promise.all(passwords.map(hashPassword));
    const checks = await Promise.all(
      passwords.flatMap((password, i) => [
        verifyPassword(password, stored[i]),
        verifyPassword(password, stored[(i + 1) % passwords.length]),
      ]),
    );
    expect(checks).toEqual([true, false, true, false, true, false, true, false]);
  });

  it('fails a hash with impossible parameters, and keeps working after it', async () => {
    // N must be a power of two: scrypt refuses, the caller gets the error (a 500 at the grant).
    await expect(verifyPassword('x', 'scrypt$3$8$1$c2FsdHNhbHQ$a2V5')).rejects.toThrow(/scrypt/i);
    await expect(verifyPassword('again', await hashPassword('again'))).resolves.toBe(true);
  });

  it('ends its threads on stop (the process exits without waiting for them), and hashes again after', async () => {
    await stopPasswordThreads();
    await stat('.'); // libuv's own thread pool, started by the first asynchronous call
    const before = threads();
    await hashPassword('warm');
    expect(threads()).toBeGreaterThan(before);
    await stopPasswordThreads();
    expect(threads()).toBe(before);
    await expect(verifyPassword('again', await hashPassword('again'))).resolves.toBe(true);
    await stopPasswordThreads();
  });
});
