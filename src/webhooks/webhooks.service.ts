import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { generateSchema } from '@nestjs/swagger';
import { Repository } from 'typeorm';
import { Page } from '../pagination/page.js';
import { paginate } from '../pagination/paginate.js';
import { toPageRequest } from '../pagination/page-query.dto.js';
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
  ) {}

  /** The client's own events, newest first (ids are time-ordered UUIDv7s). */
  async list(query: WebhookListQueryDto, clientId: string): Promise<Page<WebhookEventDto>> {
    const qb = this.events.createQueryBuilder('e').where('e.client_id = :clientId', { clientId });
    if (query.event !== undefined) qb.andWhere('e.event = :event', { event: query.event });
    if (query.status !== undefined) qb.andWhere('e.status = :status', { status: query.status });
    const page = await paginate(qb, toPageRequest(query), { orderBy: 'id', order: 'DESC' });
    return page.map((row) => WebhookEventDto.from(row));
  }

  /** One of the client's own events; another client's is not found, like an unknown one. */
  async get(id: string, clientId: string): Promise<WebhookEventDto> {
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
