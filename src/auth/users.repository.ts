import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.js';
import { User } from './user.entity.js';

/** Every query of `oauth_users`. */
@Injectable()
export class UsersRepository {
  /** The read of every password grant. */
  private readonly byUsername: (parameters: { username: string }) => Promise<User | null>;

  constructor(private readonly db: Database) {
    this.byUsername = db.oneBy(User, 'username = :username');
  }

  private get rows() {
    return this.db.dataSource.getRepository(User);
  }

  existsByUsername(username: string): Promise<boolean> {
    return this.rows.existsBy({ username });
  }

  findByUsername(username: string): Promise<User | null> {
    return this.byUsername({ username });
  }

  /** Inserts the user and sets its generated `id`; the unique username index refuses a twin. */
  async insert(user: User): Promise<void> {
    await this.db.transaction((manager) => manager.insert(User, user));
  }
}
