import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { inTurn } from '../database/transaction.js';
import type { Environment } from '../config/environment.js';
import { FixedWindowLimiter } from './fixed-window-limiter.js';
import {
  InvalidGrantException,
  TooManyAttemptsException,
  UsernameTakenException,
} from './oauth.exceptions.js';
import { hashPassword, verifyPassword } from './password-hash.js';
import { User } from './user.entity.js';

/** Shorter passwords are refused at creation (README "CLI"); existing ones still authenticate. */
export const MIN_PASSWORD_LENGTH = 8;

/** 1–255 characters (the column), no control characters (a NUL byte fails a PostgreSQL query). */
export function isPlausibleUsername(username: string): boolean {
  if (username.length < 1 || username.length > 255) return false;
  for (let i = 0; i < username.length; i++) {
    const code = username.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return false;
  }
  return true;
}

/** Resource owners of the password grant. */
@Injectable()
export class UsersService {
  private readonly failures: FixedWindowLimiter;

  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    config: ConfigService<Environment, true>,
  ) {
    this.failures = new FixedWindowLimiter(
      config.get('THROTTLE_TOKEN_FAILURES_PER_USER', { infer: true }),
    );
  }

  async create(username: string, password: string): Promise<{ id: number; username: string }> {
    if (await this.users.existsBy({ username })) throw new UsernameTakenException();
    const user = this.users.create({
      username,
      passwordHash: await hashPassword(password),
      createdAt: Date.now(),
    });
    try {
      await inTurn(this.users.manager.connection, () => this.users.insert(user));
    } catch (error) {
      // Created meanwhile by someone else: the unique index refused the second one.
      if (await this.users.existsBy({ username })) throw new UsernameTakenException();
      throw error;
    }
    return { id: user.id, username: user.username };
  }

  /**
   * The user, when the password is right; otherwise invalid_grant after the same work whether or
   * not the username exists. Failures count against the username (429 past the limit).
   */
  async authenticate(username: string, password: string): Promise<User> {
    const retryAfter = this.failures.retryAfter(username);
    if (retryAfter > 0) throw new TooManyAttemptsException(retryAfter);

    const user = isPlausibleUsername(username) ? await this.users.findOneBy({ username }) : null;
    if (!(await verifyPassword(password, user?.passwordHash)) || !user) {
      // Checked again after the await (see ClientsService.authenticate): a burst gets no more
      // than the limit's worth of verdicts.
      const late = this.failures.retryAfter(username);
      this.failures.record(username);
      if (late > 0) throw new TooManyAttemptsException(late);
      throw new InvalidGrantException();
    }
    return user;
  }
}
