import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { generateSchema } from '@nestjs/swagger';
import { DataSource, In, Repository } from 'typeorm';
import { sql, transact, type Work } from '../database/transact.js';
import { Page } from '../pagination/page.js';
import { toPageRequest } from '../pagination/page-query.dto.js';
import { blockEnd, locate, toBlockCounts } from '../pagination/positions.js';
import { WebhookEventDto, WebhookEventTypeDto } from './dto/webhook-event.dto.js';
import type { WebhookListQueryDto } from './dto/webhook-list-query.dto.js';
import { WebhookNotFoundException } from './webhook.exceptions.js';
import { WebhookEvent } from './webhook-event.entity.js';
import { WebhookRegistry } from './webhook-registry.js';
import { UUID_PATTERN } from './uuid-v7.js';

/** The read side of webhooks: stored events and the accepted event types. */
@Injectable()
export class WebhooksService {
  private eventTypes?: WebhookEventTypeDto[];

  constructor(
    @InjectRepository(WebhookEvent) private readonly events: Repository<WebhookEvent>,
    private readonly registry: WebhookRegistry,
    private readonly dataSource: DataSource,
  ) {}

  /**
   * The client's own events, newest stored first (by `seq`), optionally of one event name and
   * status. The exact total and the page's place come from the per-block counts the database
   * keeps (pagination/positions.ts), read in one snapshot with the page's ids.
   */
  async list(clientId: string, query: WebhookListQueryDto): Promise<Page<WebhookEventDto>> {
    const db = this.dataSource;
    const request = toPageRequest(query);
    const filter = { client: clientId, event: query.event ?? null, status: query.status ?? null };
    // One statement text for every filter combination (prepared once); the casts type the
    // parameters for PostgreSQL when they are null.
    const matches = `client_id = :client
      AND (CAST(:event AS varchar(100)) IS NULL OR event = :event)
      AND (CAST(:status AS varchar(16)) IS NULL OR status = :status)`;
    const { ids, total } = await transact(db, 'read', function* (): Work<{
      ids: string[];
      total: number;
    }> {
      // Folded counts and the changes not folded yet (PostgreSQL; see WebhookEventBlocks).
      const blocks = yield sql(
        db,
        `SELECT block, SUM(rows) AS rows FROM (
           SELECT block, rows FROM webhook_event_blocks WHERE ${matches}
           UNION ALL
           SELECT block, rows FROM webhook_event_block_changes WHERE ${matches}
         ) counted GROUP BY block ORDER BY block DESC`,
        filter,
      );
      const { total, start } = locate(toBlockCounts(blocks.rows), request.offset);
      if (!start) return { ids: [], total };
      const page = yield sql(
        db,
        `SELECT id FROM webhook_events WHERE ${matches} AND seq < :before
         ORDER BY seq DESC LIMIT :limit OFFSET :skip`,
        { ...filter, before: blockEnd(start.block), limit: request.limit, skip: start.skip },
      );
      return { ids: page.rows.map((row) => String(row.id)), total };
    });
    const rows = ids.length ? await this.events.findBy({ id: In(ids) }) : [];
    const byId = new Map(rows.map((row) => [row.id, row]));
    // A row pruned between the two reads is left out rather than failing the page.
    const items = ids.flatMap((id) => {
      const row = byId.get(id);
      return row ? [WebhookEventDto.from(row)] : [];
    });
    return new Page(items, total, request);
  }

  /** One of the client's own events; another client's is as unknown as a missing one. */
  async get(clientId: string, id: string): Promise<WebhookEventDto> {
    // Anything that is not a UUID names no webhook (and PostgreSQL would refuse it as a uuid).
    const row = UUID_PATTERN.test(id)
      ? await this.events.findOneBy({ id: id.toLowerCase(), clientId })
      : null;
    if (!row) throw new WebhookNotFoundException();
    return WebhookEventDto.from(row);
  }

  types(): WebhookEventTypeDto[] {
    this.eventTypes ??= this.registry.definitions().map((definition) => ({
      event: definition.event,
      // Unknown payload fields are accepted and kept, whatever the DTO lists.
      payload_schema: { ...generateSchema(definition.payload).schema, additionalProperties: true },
    }));
    return this.eventTypes;
  }
}
