import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.js';
import { SigningKey } from './signing-key.entity.js';

/** Every query of `oauth_signing_keys`. */
@Injectable()
export class SigningKeysRepository {
  constructor(private readonly db: Database) {}

  /** Oldest first. */
  all(): Promise<SigningKey[]> {
    return this.db.dataSource.getRepository(SigningKey).find({ order: { createdAt: 'ASC' } });
  }

  /** Inserts the key unless its slot (unique) is taken already: the first instance wins. */
  async insertUnlessSlotTaken(key: SigningKey): Promise<void> {
    await this.db.transaction((manager) =>
      manager.createQueryBuilder().insert().into(SigningKey).values(key).orIgnore().execute(),
    );
  }
}
