import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { Database } from '../database/index.js';
import { User } from './user.entity.js';

/** Every query of `oauth_users`. */
@Injectable()
export class UsersRepository {
  constructor(
    private readonly db: Database,
    @InjectRepository(User) private readonly users: Repository<User>,
  ) {}

  existsByUsername(username: string): Promise<boolean> {
    return this.users.existsBy({ username });
  }

  findByUsername(username: string): Promise<User | null> {
    return this.users.findOneBy({ username });
  }

  /** Inserts the user and sets its generated `id`; the unique username index refuses a twin. */
  async insert(user: User): Promise<void> {
    await this.db.transaction((manager) => manager.insert(User, user));
  }
}
