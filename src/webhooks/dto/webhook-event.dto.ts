import { ApiProperty } from '@nestjs/swagger';
import { RawJson } from '../../common/raw-json.js';
import {
  WEBHOOK_STATUSES,
  type WebhookEvent,
  type WebhookStatus,
} from '../webhook-event.entity.js';

/** POST /v2/webhooks' answer: the stored event (the first delivery's, for a redelivery). */
export class WebhookAcceptedDto {
  @ApiProperty({ format: 'uuid', example: '019a8f4e-7b1c-7d2e-8f3a-1b2c3d4e5f60' })
  id: string;

  @ApiProperty({ description: 'One of the accepted events (GET /v2/webhooks/events).' })
  event: string;

  @ApiProperty({ enum: WEBHOOK_STATUSES, example: 'processed' })
  status: WebhookStatus;

  @ApiProperty({ format: 'date-time', example: '2025-11-22T10:57:00.000Z' })
  received_at: string;

  static from(row: WebhookEvent): WebhookAcceptedDto {
    return {
      id: row.id,
      event: row.event,
      status: row.status,
      received_at: row.receivedAt.toISOString(),
    };
  }
}

/** An item of GET /v2/webhooks and GET /v2/webhooks/{id}. */
export class WebhookEventDto extends WebhookAcceptedDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The payload as received, unknown fields included.',
  })
  // Sent as stored, not parsed and serialized again (RawJson).
  payload: RawJson;

  @ApiProperty({ type: 'integer', description: 'How many times the handler ran.', example: 1 })
  attempts: number;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description:
      "Why the last run failed, as the handler told the sender (a WebhookFailure's message), or a fixed sentence for an unexpected error; null once processed.",
    example: null,
  })
  last_error: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  processed_at: string | null;

  static override from(row: WebhookEvent): WebhookEventDto {
    return {
      ...WebhookAcceptedDto.from(row),
      payload: new RawJson(row.payload),
      attempts: row.attempts,
      last_error: row.lastError,
      processed_at: row.processedAt?.toISOString() ?? null,
    };
  }
}

export class WebhookFailedDto {
  @ApiProperty({ example: 'The webhook could not be processed.' })
  message: string;

  @ApiProperty({ format: 'uuid', description: 'Id of the stored, failed event.' })
  id: string;
}

/** An item of GET /v2/webhooks/events. */
export class WebhookEventTypeDto {
  @ApiProperty()
  event: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'JSON schema of the payload (unknown fields are accepted and kept).',
  })
  payload_schema: Record<string, unknown>;
}
