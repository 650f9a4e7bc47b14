import { Injectable } from '@nestjs/common';
import { In, type EntityManager } from 'typeorm';
import {
  Database,
  defineList,
  InjectList,
  insertUnlessConflict,
  type PagedList,
} from '../database/index.js';
import type { Page } from '../pagination/page.js';
import type { PageRequest } from '../pagination/page-query.dto.js';
import { WebhookEvent, type WebhookStatus } from './webhook-event.entity.js';

/**
 * GET /v2/webhooks: a client's events, newest stored first (by `seq`, a dense insertion number),
 * by event name and status. Counted in `webhook_event_blocks` / `_superblocks` (migrations
 * CreateListPositions and AddPositionSuperblocks); concurrent deliveries append their changes
 * on PostgreSQL, folded in the background (ListCountsFolder).
 */
export const webhookEventsList = defineList({
  entity: WebhookEvent,
  key: 'seq',
  order: 'DESC',
  scope: 'clientId',
  filters: ['event', 'status'],
  counts: 'webhook_event',
  appendChanges: true,
  // Up to 1 MiB each: read once the page has memory for them (WebhooksService.list).
  omit: ['payload'],
});

/** The filters of GET /v2/webhooks. */
export interface WebhookEventFilters {
  event?: string;
  status?: WebhookStatus;
}

/** A failed event's place in the order replays take them. */
export interface FailedEvent {
  id: string;
  lastAttemptAt: Date;
}

/**
 * Every query of `webhook_events`. Writes take the EntityManager of the transaction the event is
 * processed in (its handler's writes must commit or roll back with it); reads go through Database.
 */
@Injectable()
export class WebhookEventsRepository {
  /** One event by id, only the given client's unless that is null. */
  private readonly byId: (parameters: {
    id: string;
    client: string | null;
  }) => Promise<WebhookEvent | null>;

  constructor(
    private readonly db: Database,
    @InjectList(webhookEventsList) private readonly list: PagedList<WebhookEvent>,
  ) {
    this.byId = db.oneBy(
      WebhookEvent,
      'id = :id AND (CAST(:client AS varchar(64)) IS NULL OR client_id = :client)',
    );
  }

  /**
   * One client's events, newest stored first (by `seq`): the exact total and the page read in one
   * snapshot (webhookEventsList), without their payloads (payloadsOf()).
   */
  page(
    clientId: string,
    filters: WebhookEventFilters,
    request: PageRequest,
  ): Promise<Page<WebhookEvent>> {
    return this.list.page(request, clientId, filters);
  }

  /** The total length of these events of this client's payloads, in characters. */
  async payloadLength(clientId: string, ids: string[]): Promise<number> {
    const row = await this.events()
      .createQueryBuilder('e')
      .select('SUM(LENGTH(e.payload))', 'length')
      .whereInIds(ids)
      .andWhere('e.clientId = :clientId', { clientId })
      .getRawOne<{ length: number | string | null }>();
    return Number(row?.length ?? 0);
  }

  /** These events' payloads by id (an event deleted meanwhile has none). */
  async payloadsOf(ids: string[]): Promise<Map<string, string>> {
    const rows = await this.events().find({
      select: { id: true, payload: true },
      where: { id: In(ids) },
    });
    return new Map(rows.map((row) => [row.id, row.payload]));
  }

  /** The event with this id; with `clientId`, only if that client sent it (the CLI sees all). */
  findById(id: string, clientId?: string): Promise<WebhookEvent | null> {
    return this.byId({ id, client: clientId ?? null });
  }

  /**
   * Failed events last attempted before `before`, oldest attempt first, resuming after `after`
   * (the last of the previous batch): the (status, last_attempt_at, id) index in its order.
   */
  async failedBefore(
    before: Date,
    after: FailedEvent | undefined,
    limit: number,
  ): Promise<FailedEvent[]> {
    const query = this.failedBeforeQuery(before)
      .select(['e.id', 'e.lastAttemptAt'])
      .orderBy('e.lastAttemptAt', 'ASC')
      .addOrderBy('e.id', 'ASC')
      .limit(limit);
    if (after) {
      query.andWhere('(e.lastAttemptAt, e.id) > (:afterAt, :afterId)', {
        afterAt: after.lastAttemptAt,
        afterId: after.id,
      });
    }
    return (await query.getMany()).map(({ id, lastAttemptAt }) => ({
      id,
      lastAttemptAt: lastAttemptAt!,
    }));
  }

  /** How many events are failed with a last attempt before `before` (what a replay will read). */
  countFailedBefore(before: Date): Promise<number> {
    return this.failedBeforeQuery(before).getCount();
  }

  private events() {
    return this.db.dataSource.getRepository(WebhookEvent);
  }

  /** The events a replay started at `before` reads: failed, last attempted before it. */
  private failedBeforeQuery(before: Date) {
    return this.events()
      .createQueryBuilder('e')
      .where('e.status = :status', { status: 'failed' })
      .andWhere('e.lastAttemptAt < :before', { before });
  }

  /**
   * Inserts the row unless an event with its (client_id, event, dedupe_key) is stored already ("ON CONFLICT
   * DO NOTHING"): true when it went in.
   */
  insertUnlessDuplicate(manager: EntityManager, row: WebhookEvent): Promise<boolean> {
    // The insertion number is taken in the insert itself: the triggers that would otherwise
    // number the row (a second write of the row on SQLite) are skipped; only the count runs.
    return insertUnlessConflict(manager, WebhookEvent, row, {
      key: 'seq',
      sequence: 'webhook_events_seq',
    });
  }

  /** The event this client stored under this event name and dedupe key (in `manager`'s transaction). */
  findByKey(manager: EntityManager, row: Pick<WebhookEvent, 'clientId' | 'event' | 'dedupeKey'>) {
    return manager.findOneByOrFail(WebhookEvent, {
      clientId: row.clientId,
      event: row.event,
      dedupeKey: row.dedupeKey,
    });
  }

  findByIdIn(manager: EntityManager, id: string): Promise<WebhookEvent> {
    return manager.findOneByOrFail(WebhookEvent, { id });
  }

  /**
   * Marks a failed event processed, one more attempt; false when it was not failed any more
   * (another claimer got it first: only one runs the handler).
   */
  async claimFailed(manager: EntityManager, id: string): Promise<boolean> {
    const now = new Date();
    const claim = await manager
      .createQueryBuilder()
      .update(WebhookEvent)
      .set({
        status: 'processed',
        attempts: () => 'attempts + 1',
        lastError: null,
        processedAt: now,
        lastAttemptAt: now,
      })
      .where('id = :id AND status = :status', { id, status: 'failed' })
      .execute();
    return !!claim.affected;
  }

  /** One more failed attempt on the failed event stored under this key. */
  async recordAnotherFailure(
    manager: EntityManager,
    row: Pick<WebhookEvent, 'clientId' | 'event' | 'dedupeKey'>,
    lastError: string,
  ): Promise<void> {
    await manager
      .createQueryBuilder()
      .update(WebhookEvent)
      .set({ attempts: () => 'attempts + 1', lastError, lastAttemptAt: new Date() })
      .where(
        'client_id = :clientId AND event = :event AND dedupe_key = :dedupeKey AND status = :status',
        { clientId: row.clientId, event: row.event, dedupeKey: row.dedupeKey, status: 'failed' },
      )
      .execute();
  }
}
