import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import {
  InvalidGrantException,
  PasswordChecksBusyException,
  TooManyAttemptsException,
  UsernameTakenException,
} from './oauth.exceptions.js';
import {
  hashPassword,
  PasswordHashingBusyError,
  stopPasswordThreads,
  verifyPassword,
} from './password-hash.js';
import { ThrottlingService } from './throttling.service.js';
import { User } from './user.entity.js';
import { UsersRepository } from './users.repository.js';

/**
 * Shorter passwords are refused at creation (docs/operations.md "The CLI"); existing ones still
 * authenticate.
 */
export const MIN_PASSWORD_LENGTH = 8;

/** 1–255 characters (the column), no control characters (a NUL byte fails a PostgreSQL query). */
export function isPlausibleUsername(username: string): boolean {
  // At most 255 characters, counted as characters (a character may take two UTF-16 units).
  if (username.length < 1 || username.length > 510) return false;
  if (username.length > 255 && [...username].length > 255) return false;
  for (let i = 0; i < username.length; i++) {
    const code = username.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return false;
  }
  return true;
}

/** Resource owners of the password grant. */
@Injectable()
export class UsersService implements OnApplicationShutdown {
  constructor(
    private readonly users: UsersRepository,
    private readonly throttling: ThrottlingService,
  ) {}

  /** The hashing threads end with the application (a process waits for its threads to end). */
  onApplicationShutdown(): Promise<void> {
    return stopPasswordThreads();
  }

  async create(name: string, password: string): Promise<{ id: number; username: string }> {
    const username = sameName(name);
    if (await this.users.existsByUsername(username)) throw new UsernameTakenException();
    const user = Object.assign(new User(), {
      username,
      passwordHash: await hashPassword(password),
      createdAt: Date.now(),
    });
    try {
      await this.users.insert(user);
    } catch (error) {
      // Created meanwhile by someone else: the unique index refused the second one.
      if (await this.users.existsByUsername(username)) throw new UsernameTakenException();
      throw error;
    }
    return { id: user.id, username: user.username };
  }

  /**
   * The user, when the password is right; otherwise invalid_grant after the same work whether or
   * not the username exists. Failures count against the username from that address and from
   * all addresses together (429 past either limit).
   */
  async authenticate(name: string, password: string, address: string): Promise<User> {
    const username = sameName(name);
    const failures = this.throttling.passwordFailuresFrom(username, address);
    await failures.refuseIfExhausted();

    const user = isPlausibleUsername(username) ? await this.users.findByUsername(username) : null;
    const matches = await verifyPassword(password, user?.passwordHash, { address, username }).catch(
      (error: unknown) => {
        // Hashing is saturated, or this address or username has its share waiting: refused at
        // once rather than answered after the contract's 5 s (password-hash.ts).
        if (!(error instanceof PasswordHashingBusyError)) throw error;
        throw error.reason === 'share'
          ? new TooManyAttemptsException(error.retryAfterSeconds)
          : new PasswordChecksBusyException(error.retryAfterSeconds);
      },
    );
    if (!matches || !user) {
      await failures.record();
      throw new InvalidGrantException();
    }
    return user;
  }
}

/**
 * A username as stored and looked up: in Unicode NFC, so that `é` typed as one character or as
 * `e` and a combining accent (as some keyboards and systems send it) is one user (RFC 8265 §3.3).
 */
function sameName(username: string): string {
  return username.normalize('NFC');
}
