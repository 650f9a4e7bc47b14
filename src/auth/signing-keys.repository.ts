import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { Database, insertUnlessConflict } from '../database/index.js';
import { SIGNING_SLOT, SigningKey } from './signing-key.entity.js';

/** Rotations at once beyond this many are refused rather than retried forever. */
const MAX_ATTEMPTS = 100;

/** Every query of `oauth_signing_keys`. */
@Injectable()
export class SigningKeysRepository {
  constructor(
    private readonly db: Database,
    @InjectRepository(SigningKey) private readonly keys: Repository<SigningKey>,
  ) {}

  /** Oldest first. */
  all(): Promise<SigningKey[]> {
    return this.keys.find({ order: { createdAt: 'ASC' } });
  }

  /** Inserts the key unless its slot (unique) is taken already: the first instance wins. */
  async insertUnlessSlotTaken(key: SigningKey): Promise<void> {
    await this.db.transaction((manager) =>
      manager.createQueryBuilder().insert().into(SigningKey).values(key).orIgnore().execute(),
    );
  }

  findByKid(kid: string): Promise<SigningKey | null> {
    return this.keys.findOneBy({ kid });
  }

  /** Makes `key` the signing key in one transaction; resolves to the previous one's kid. */
  async replaceSigningKey(key: SigningKey): Promise<string | null> {
    // Another rotation may commit its key between this one's read and its insert (PostgreSQL
    // runs both at once): the slot is then taken, and this one goes again, replacing that key.
    // Each loss is a different rotation's commit, so n rotations at once lose at most n - 1
    // times each; the cap only stops a runaway (a fixed cap of 5 failed with 6 at once).
    for (let attempt = 1; ; attempt++) {
      const { inserted, previous } = await this.db.transaction(async (manager) => {
        const current = await manager.findOneBy(SigningKey, { slot: SIGNING_SLOT });
        if (current) await manager.update(SigningKey, { kid: current.kid }, { slot: null });
        const inserted = await insertUnlessConflict(manager, SigningKey, key);
        return { inserted, previous: current?.kid ?? null };
      });
      if (inserted) return previous;
      if (attempt === MAX_ATTEMPTS)
        throw new Error('Other key rotations kept taking the signing slot.');
    }
  }

  /** A retired key never holds the signing slot. */
  async retire(kid: string, retiredAt: number): Promise<void> {
    await this.db.transaction((manager) =>
      manager.update(SigningKey, { kid }, { retiredAt, slot: null }),
    );
  }
}
