import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Usernames are compared in Unicode NFC from now on (`é` typed as one character or as `e` and a
 * combining accent is one name): stored ones in another form are rewritten in NFC, a batch at a
 * time. One whose NFC form another user holds already is left as it is (two accounts the
 * operator must merge: `SELECT id, username FROM oauth_users` lists both); it can no longer
 * sign in by name.
 */
export class NormalizeUsernames1763800014000 implements MigrationInterface {
  name = 'NormalizeUsernames1763800014000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const manager = queryRunner.manager;
    for (let after = 0; ;) {
      const rows: { id: number; username: string }[] = await manager
        .createQueryBuilder()
        .select(['u.id AS id', 'u.username AS username'])
        .from('oauth_users', 'u')
        .where('u.id > :after', { after })
        .orderBy('u.id')
        .limit(BATCH)
        .getRawMany();
      if (rows.length === 0) return;
      after = Number(rows[rows.length - 1].id);
      for (const { id, username } of rows) {
        const normal = username.normalize('NFC');
        if (normal === username) continue;
        const twin = await manager
          .createQueryBuilder()
          .select('u.id', 'id')
          .from('oauth_users', 'u')
          .where('u.username = :normal', { normal })
          .getRawOne();
        if (twin) continue;
        await manager
          .createQueryBuilder()
          .update('oauth_users')
          .set({ username: normal })
          .where('id = :id', { id })
          .execute();
      }
    }
  }

  /** NFC is a spelling of the same names: nothing to undo. */
  async down(): Promise<void> {}
}

const BATCH = 1000;
