import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Database } from '../database/database.js';
import { insertUnlessConflict } from '../database/insert-unless-conflict.js';
import type { Page } from '../pagination/page.js';
import type { PageRequest } from '../pagination/page-query.dto.js';
import { paginate } from '../pagination/paginate.js';
import { WebhookEvent, type WebhookStatus } from './webhook-event.entity.js';

/** The filters of GET /v2/webhooks. */
export interface WebhookEventFilters {
  event?: string;
  status?: WebhookStatus;
}

/**
 * Every query of `webhook_events`. Writes take the EntityManager of the transaction the event is
 * processed in (its handler's writes must commit or roll back with it); reads go through Database.
 */
@Injectable()
export class WebhookEventsRepository {
  constructor(private readonly db: Database) {}

  /** Newest first (ids are time-ordered UUIDv7s). */
  page(filters: WebhookEventFilters, request: PageRequest): Promise<Page<WebhookEvent>> {
    const qb = this.db.dataSource.getRepository(WebhookEvent).createQueryBuilder('e');
    if (filters.event !== undefined) qb.andWhere('e.event = :event', { event: filters.event });
    if (filters.status !== undefined) qb.andWhere('e.status = :status', { status: filters.status });
    return paginate(this.db, qb, request, { orderBy: 'id', order: 'DESC' });
  }

  findById(id: string): Promise<WebhookEvent | null> {
    return this.db.dataSource.getRepository(WebhookEvent).findOneBy({ id });
  }

  /** Ids of failed events after `after` (all when undefined), oldest first. */
  async failedIds(after: string | undefined, limit: number): Promise<string[]> {
    const query = this.db.dataSource
      .getRepository(WebhookEvent)
      .createQueryBuilder('e')
      .select('e.id')
      .where('e.status = :status', { status: 'failed' })
      .orderBy('e.id', 'ASC')
      .limit(limit);
    if (after) query.andWhere('e.id > :after', { after });
    return (await query.getMany()).map((row) => row.id);
  }

  /**
   * Inserts the row unless an event with its (event, dedupe_key) is stored already ("ON CONFLICT
   * DO NOTHING"): true when it went in.
   */
  insertUnlessDuplicate(manager: EntityManager, row: WebhookEvent): Promise<boolean> {
    return insertUnlessConflict(manager, WebhookEvent, row);
  }

  /** The event stored under this event name and dedupe key (inside `manager`'s transaction). */
  findByKey(manager: EntityManager, row: Pick<WebhookEvent, 'event' | 'dedupeKey'>) {
    return manager.findOneByOrFail(WebhookEvent, { event: row.event, dedupeKey: row.dedupeKey });
  }

  findByIdIn(manager: EntityManager, id: string): Promise<WebhookEvent> {
    return manager.findOneByOrFail(WebhookEvent, { id });
  }

  /**
   * Marks a failed event processed, one more attempt; false when it was not failed any more
   * (another claimer got it first: only one runs the handler).
   */
  async claimFailed(manager: EntityManager, id: string): Promise<boolean> {
    const claim = await manager
      .createQueryBuilder()
      .update(WebhookEvent)
      .set({
        status: 'processed',
        attempts: () => 'attempts + 1',
        lastError: null,
        processedAt: new Date(),
      })
      .where('id = :id AND status = :status', { id, status: 'failed' })
      .execute();
    return !!claim.affected;
  }

  /** One more failed attempt on the failed event stored under this key. */
  async recordAnotherFailure(
    manager: EntityManager,
    row: Pick<WebhookEvent, 'event' | 'dedupeKey'>,
    lastError: string,
  ): Promise<void> {
    await manager
      .createQueryBuilder()
      .update(WebhookEvent)
      .set({ attempts: () => 'attempts + 1', lastError })
      .where('event = :event AND dedupe_key = :dedupeKey AND status = :status', {
        event: row.event,
        dedupeKey: row.dedupeKey,
        status: 'failed',
      })
      .execute();
  }
}
