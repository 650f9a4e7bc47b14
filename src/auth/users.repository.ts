import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.js';
import { User } from './user.entity.js';

/** Every query of `oauth_users`. */
@Injectable()
export class UsersRepository {
  /** The read of every password grant, as one prepared statement (no query to build each time). */
  private readonly byUsername: string;

  constructor(private readonly db: Database) {
    this.byUsername = `SELECT ${db.columnsOf(User)} FROM oauth_users WHERE username = :username`;
  }

  private get rows() {
    return this.db.dataSource.getRepository(User);
  }

  existsByUsername(username: string): Promise<boolean> {
    return this.rows.existsBy({ username });
  }

  async findByUsername(username: string): Promise<User | null> {
    const rows = await this.db.select(this.db.sql(this.byUsername, { username }));
    return this.db.hydrate(User, rows)[0] ?? null;
  }

  /** Inserts the user and sets its generated `id`; the unique username index refuses a twin. */
  async insert(user: User): Promise<void> {
    await this.db.transaction((manager) => manager.insert(User, user));
  }
}
