import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { epochColumn } from './column-transformers.js';

/** A denylisted access token. Kept only until the token would have expired anyway. */
@Entity({ name: 'oauth_revoked_tokens' })
@Index('IDX_oauth_revoked_tokens_expires_at', ['expiresAt'])
export class RevokedToken {
  /** The token's `jti`. */
  @PrimaryColumn({ type: 'varchar', length: 64 })
  jti: string;

  @Column({ name: 'client_id', type: 'varchar', length: 36 })
  clientId: string;

  /** The token's `exp` (epoch seconds). */
  @Column({ name: 'expires_at', type: 'bigint', transformer: epochColumn })
  expiresAt: number;

  /** Epoch milliseconds. */
  @Column({ name: 'revoked_at', type: 'bigint', transformer: epochColumn })
  revokedAt: number;
}
