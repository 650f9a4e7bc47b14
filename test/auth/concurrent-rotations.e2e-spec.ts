import { SigningKeysService } from '../../src/auth/signing-keys.service.js';
import { startTestApp, TestApp } from '../support/app.js';

/**
 * `keys:rotate` run several times at once (CONTRACT §3): on PostgreSQL the rotations run side by
 * side, and one that found the slot taken by another's new key failed on the slot's unique index
 * ("A database operation failed (code 23505)"); later a fixed cap of 5 retries failed when
 * six went at once.
 */
describe('key rotations at once', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('each succeeds and replaces the one before it: one signing key, the others verifying', async () => {
    const keys = t.app.get(SigningKeysService);
    const first = (await keys.rotate()).kid;
    const rotations = await Promise.all(Array.from({ length: 8 }, () => keys.rotate()));
    const kids = rotations.map((r) => r.kid);
    const previous = rotations.map((r) => r.previous_kid);
    // A chain: each replaced a different key, the first of them the key before them all.
    expect(new Set(previous).size).toBe(8);
    expect(previous).toContain(first);
    const last = kids.filter((kid) => !previous.includes(kid));
    expect(last).toHaveLength(1);
    const listed = await keys.list();
    expect(listed.filter((key) => key.state === 'signing').map((key) => key.kid)).toEqual(last);
  });
});
