import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LessThan, MoreThan, type Repository } from 'typeorm';
import { Database } from '../database/index.js';
import { RevokedToken } from './revoked-token.entity.js';

/** Every query of `oauth_revoked_tokens`. */
@Injectable()
export class RevokedTokensRepository {
  constructor(
    private readonly db: Database,
    @InjectRepository(RevokedToken) private readonly revoked: Repository<RevokedToken>,
  ) {}

  /** Records a revocation; revoking a token twice keeps the first record. */
  async insertUnlessPresent(row: RevokedToken): Promise<void> {
    await this.db.transaction((manager) =>
      manager.createQueryBuilder().insert().into(RevokedToken).values(row).orIgnore().execute(),
    );
  }

  /** Revocations of tokens that expire after `seconds` (epoch seconds). */
  expiringAfter(seconds: number): Promise<Pick<RevokedToken, 'jti' | 'expiresAt'>[]> {
    return this.revoked.find({
      select: { jti: true, expiresAt: true },
      where: { expiresAt: MoreThan(seconds) },
    });
  }

  /** Forgets revocations of tokens that expired before `seconds` (epoch seconds). */
  async deleteExpiredBefore(seconds: number): Promise<void> {
    await this.db.transaction((manager) =>
      manager.delete(RevokedToken, { expiresAt: LessThan(seconds) }),
    );
  }
}
