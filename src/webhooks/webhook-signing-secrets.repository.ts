import { Injectable } from '@nestjs/common';
import { Database } from '../database/index.js';
import { WebhookSigningSecret } from './webhook-signing-secret.entity.js';

/** The two slots a client's secrets take (the unique index allows no third). */
export const SECRET_SLOTS = [1, 2] as const;

/** Every query of `webhook_signing_secrets`. */
@Injectable()
export class WebhookSigningSecretsRepository {
  constructor(private readonly db: Database) {}

  /** Every live secret of every client (a short table: at most two rows per client). */
  all(): Promise<WebhookSigningSecret[]> {
    return this.db.dataSource.getRepository(WebhookSigningSecret).find();
  }

  /** One client's live secrets, oldest first. */
  ofClient(clientId: string): Promise<WebhookSigningSecret[]> {
    return this.db.dataSource
      .getRepository(WebhookSigningSecret)
      .find({ where: { clientId }, order: { createdAt: 'ASC', slot: 'ASC' } });
  }

  /**
   * Stores `secret` in a free slot of its client. Resolves to false when both slots are taken,
   * also by a run of the command at the same moment (the unique index keeps the first one).
   */
  insertIntoFreeSlot(secret: Omit<WebhookSigningSecret, 'slot'>): Promise<boolean> {
    return this.db.transaction(async (manager) => {
      const taken = await manager.find(WebhookSigningSecret, {
        where: { clientId: secret.clientId },
        select: { id: true, slot: true },
      });
      const slot = SECRET_SLOTS.find((s) => !taken.some((row) => row.slot === s));
      if (slot === undefined) return false;
      await manager
        .createQueryBuilder()
        .insert()
        .into(WebhookSigningSecret)
        .values({ ...secret, slot })
        .orIgnore()
        .execute();
      return manager.existsBy(WebhookSigningSecret, { id: secret.id });
    });
  }

  async delete(id: string): Promise<void> {
    await this.db.transaction((manager) => manager.delete(WebhookSigningSecret, { id }));
  }
}
