import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { epochColumn } from '../auth/column-transformers.js';

/**
 * A sending client's Standard Webhooks signing secret (`whsec_…`), encrypted with
 * WEBHOOK_SECRET_KEY (webhook-secret-cipher.ts): a database dump alone does not reveal it.
 */
@Entity({ name: 'webhook_signing_secrets' })
@Index('IDX_webhook_signing_secrets_client_slot', ['clientId', 'slot'], { unique: true })
export class WebhookSigningSecret {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ name: 'client_id', type: 'varchar', length: 36 })
  clientId: string;

  /** 1 or 2: unique per client, so that no client ever holds more than two secrets. */
  @Column({ type: 'smallint' })
  slot: number;

  /** `v1.<iv>.<ciphertext>.<tag>` (base64url), bound to the row's id and client (GCM's AAD). */
  @Column({ name: 'encrypted_secret', type: 'varchar', length: 255 })
  encryptedSecret: string;

  /** Epoch milliseconds; the older of two live secrets is the one `--retire 1` removes. */
  @Column({ name: 'created_at', type: 'bigint', transformer: epochColumn })
  createdAt: number;
}
