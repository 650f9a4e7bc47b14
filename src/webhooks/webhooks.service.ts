import { Injectable } from '@nestjs/common';
import { generateSchema } from '@nestjs/swagger';
import type { Page } from '../pagination/page.js';
import { toPageRequest } from '../pagination/page-query.dto.js';
import { WebhookEventDto, WebhookEventTypeDto } from './dto/webhook-event.dto.js';
import type { WebhookListQueryDto } from './dto/webhook-list-query.dto.js';
import { WebhookNotFoundException } from './webhook.exceptions.js';
import { WebhookEventsRepository } from './webhook-events.repository.js';
import { WebhookRegistry } from './webhook-registry.js';
import { UUID_PATTERN } from './uuid-v7.js';

/** The read side of webhooks: stored events and the accepted event types. */
@Injectable()
export class WebhooksService {
  private eventTypes?: WebhookEventTypeDto[];

  constructor(
    private readonly events: WebhookEventsRepository,
    private readonly registry: WebhookRegistry,
  ) {}

  /** The client's own events, newest stored first. */
  async list(clientId: string, query: WebhookListQueryDto): Promise<Page<WebhookEventDto>> {
    const filters = { event: query.event, status: query.status };
    const page = await this.events.page(clientId, filters, toPageRequest(query));
    return page.map((row) => WebhookEventDto.from(row));
  }

  /** One of the client's own events; another client's is as unknown as a missing one. */
  async get(clientId: string, id: string): Promise<WebhookEventDto> {
    // Anything that is not a UUID names no webhook (and PostgreSQL would refuse it as a uuid).
    const row = UUID_PATTERN.test(id)
      ? await this.events.findById(id.toLowerCase(), clientId)
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
