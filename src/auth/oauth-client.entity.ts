import { Column, Entity, PrimaryColumn } from 'typeorm';
import { epochColumn, spaceListColumn } from './column-transformers.js';
import type { GrantType } from './grant-types.js';
import type { Scope } from './scopes.js';

/** A platform that obtains tokens. Its secret is stored only as a keyed hash (secret-hash.ts). */
@Entity({ name: 'oauth_clients' })
export class OAuthClient {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ name: 'secret_hash', type: 'varchar', length: 128 })
  secretHash: string;

  @Column({ type: 'varchar', length: 255, transformer: spaceListColumn })
  grants: GrantType[];

  @Column({ type: 'varchar', length: 255, transformer: spaceListColumn })
  scopes: Scope[];

  @Column({ type: 'boolean' })
  disabled: boolean;

  /** Epoch seconds: tokens of this client issued at or before this instant are refused. */
  @Column({ name: 'tokens_not_before', type: 'bigint', nullable: true, transformer: epochColumn })
  tokensNotBefore: number | null;

  /** Epoch milliseconds. */
  @Column({ name: 'created_at', type: 'bigint', transformer: epochColumn })
  createdAt: number;
}
