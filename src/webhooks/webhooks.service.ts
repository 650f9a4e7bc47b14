import { Injectable } from '@nestjs/common';
import { generateSchema } from '@nestjs/swagger';
import { ServiceUnavailableApiException } from '../common/exceptions/api.exception.js';
import { nothingHeld, processMemory, type Release } from '../common/memory-budget.js';
import type { Page } from '../pagination/page.js';
import { toPageRequest } from '../pagination/page-query.dto.js';
import { WebhookEventDto, WebhookEventTypeDto } from './dto/webhook-event.dto.js';
import type { WebhookListQueryDto } from './dto/webhook-list-query.dto.js';
import { WebhookNotFoundException } from './webhook.exceptions.js';
import { WebhookEventsRepository } from './webhook-events.repository.js';
import { WebhookRegistry } from './webhook-registry.js';
import { UUID_PATTERN } from './uuid-v7.js';

/**
 * Memory a page holds for each character of its payloads until it has been sent (the database
 * driver's buffer, the rows, the body, the socket's buffer): a page of 100 payloads of 1 MiB
 * took about 500 MB of RSS.
 */
const BYTES_PER_PAYLOAD_CHARACTER = 6;

/** The read side of webhooks: stored events and the accepted event types. */
@Injectable()
export class WebhooksService {
  private eventTypes?: WebhookEventTypeDto[];

  constructor(
    private readonly events: WebhookEventsRepository,
    private readonly registry: WebhookRegistry,
  ) {}

  /**
   * The client's own events, newest stored first. Their payloads (up to 1 MiB each) are read once
   * the process's memory budget has room for them; the answer holds it until `release()`, called
   * once it has been sent.
   */
  async list(
    clientId: string,
    query: WebhookListQueryDto,
  ): Promise<{ page: Page<WebhookEventDto>; release: Release }> {
    const filters = { event: query.event, status: query.status };
    for (let attempt = 1; ; attempt++) {
      const page = await this.events.page(clientId, filters, toPageRequest(query));
      const ids = page.items.map((row) => row.id);
      if (ids.length === 0) {
        return { page: page.map((row) => WebhookEventDto.from(row)), release: nothingHeld };
      }
      const release = await this.holdFor(clientId, ids);
      try {
        const payloads = await this.events.payloadsOf(ids);
        if (ids.every((id) => payloads.has(id))) {
          for (const row of page.items) row.payload = payloads.get(row.id)!;
          return { page: page.map((row) => WebhookEventDto.from(row)), release };
        }
      } catch (error) {
        release();
        throw error;
      }
      release();
      // An event of the page was deleted (retention) between the two reads: the page moved.
      if (attempt === 3)
        throw new ServiceUnavailableApiException('The list is changing; try again.');
    }
  }

  /**
   * One of the client's own events; another client's is as unknown as a missing one. A large
   * payload is read once the memory budget has room for it, held until `release()`, as list()'s.
   */
  async get(clientId: string, id: string): Promise<{ event: WebhookEventDto; release: Release }> {
    // Anything that is not a UUID names no webhook (and PostgreSQL would refuse it as a uuid).
    if (!UUID_PATTERN.test(id)) throw new WebhookNotFoundException();
    const key = id.toLowerCase();
    const release = await this.holdFor(clientId, [key]);
    try {
      const row = await this.events.findById(key, clientId);
      if (!row) throw new WebhookNotFoundException();
      return { event: WebhookEventDto.from(row), release };
    } catch (error) {
      release();
      throw error;
    }
  }

  /** Room in the memory budget for these events' payloads, when they are large enough to count. */
  private async holdFor(clientId: string, ids: string[]): Promise<Release> {
    const bytes = BYTES_PER_PAYLOAD_CHARACTER * (await this.events.payloadLength(clientId, ids));
    return processMemory.counts(bytes) ? processMemory.acquire(bytes) : nothingHeld;
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
