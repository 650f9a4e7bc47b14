import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { epochColumn } from './column-transformers.js';

/** A resource owner for the password grant. */
@Entity({ name: 'oauth_users' })
@Index('IDX_oauth_users_username', ['username'], { unique: true })
export class User {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ type: 'varchar', length: 255 })
  username: string;

  /** scrypt, self-describing (password-hash.ts). */
  @Column({ name: 'password_hash', type: 'varchar', length: 255 })
  passwordHash: string;

  /** Epoch milliseconds. */
  @Column({ name: 'created_at', type: 'bigint', transformer: epochColumn })
  createdAt: number;
}
