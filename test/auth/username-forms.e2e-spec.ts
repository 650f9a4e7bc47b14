import { User } from '../../src/auth/user.entity.js';
import { UsersService } from '../../src/auth/users.service.js';
import { createClient, createUser, tokenRequest } from '../factories/client.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { createTestDatabase, migratedTo, type TestDatabase } from '../support/database.js';

/** `é` as one character (NFC) and as `e` and a combining accent (NFD). */
const COMPOSED = 'jos\u00e9';
const DECOMPOSED = 'jose\u0301';

/**
 * Usernames are compared in Unicode NFC (docs/contract.md §3): a name typed as `é` or as `e` and
 * a combining accent, as some keyboards and systems send it, is one user.
 */
describe('usernames in either Unicode form', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('a user created in one form signs in with either, and cannot be created twice', async () => {
    const client = await createClient(t, { scopes: ['customers:read'], grants: ['password'] });
    const user = await createUser(t, { username: DECOMPOSED, password: 'correct horse' });
    const stored = await t.db.getRepository(User).findOneByOrFail({ id: user.id });
    expect(stored.username).toBe(COMPOSED);
    for (const username of [COMPOSED, DECOMPOSED]) {
      const res = await tokenRequest(t, client, {
        grant_type: 'password',
        username,
        password: 'correct horse',
        scope: 'customers:read',
      });
      expect(res.status).toBe(200);
    }
    await expect(t.app.get(UsersService).create(COMPOSED, 'another one')).rejects.toThrow(
      'The username is already taken.',
    );
  });
});

describe('migration NormalizeUsernames on existing users (both databases)', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('rewrites names stored in another form in NFC, but not one whose NFC form is taken', async () => {
    const old = await migratedTo(database, 'NormalizeUsernames1763800014000');
    try {
      for (const name of [
        DECOMPOSED,
        'plain',
        'ana\u0308',
        'ann\u00e4'.normalize('NFD'),
        'ann\u00e4',
      ]) {
        await old.query(
          `INSERT INTO oauth_users (username, password_hash, created_at) VALUES ('${name}', 'x', 0)`,
        );
      }
    } finally {
      await old.destroy();
    }
    const db = await migratedTo(database);
    try {
      const rows: { username: string }[] = await db.query(
        'SELECT username FROM oauth_users ORDER BY id',
      );
      expect(rows.map((r) => r.username)).toEqual([
        COMPOSED,
        'plain',
        'an\u00e4',
        // Its NFC form is the next user's: left for the operator.
        'ann\u00e4'.normalize('NFD'),
        'ann\u00e4',
      ]);
    } finally {
      await db.destroy();
    }
  });
});
