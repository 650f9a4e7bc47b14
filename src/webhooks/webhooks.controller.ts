import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { releaseWhenAnswered } from '../common/memory-budget.js';
import type { FastifyReply } from 'fastify';
import {
  ApiBody,
  ApiExtraModels,
  ApiHeader,
  ApiInternalServerErrorResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
  getSchemaPath,
} from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/decorators/current-principal.decorator.js';
import { RequireScopes } from '../auth/decorators/require-scopes.decorator.js';
import type { Principal } from '../auth/principal.js';
import { ApiDataResponse, ValidationErrorDto } from '../common/openapi/api-response.decorators.js';
import { ApiPaginatedResponse } from '../pagination/api-paginated-response.decorator.js';
import { ErrorDto } from '../common/openapi/error.dto.js';
import { Metrics } from '../metrics/metrics.service.js';
import { Page } from '../pagination/page.js';
import {
  WebhookAcceptedDto,
  WebhookEventDto,
  WebhookEventTypeDto,
  WebhookFailedDto,
} from './dto/webhook-event.dto.js';
import { WebhookDeliveryDto } from './dto/webhook-delivery.dto.js';
import { WebhookListQueryDto } from './dto/webhook-list-query.dto.js';
import { WebhookProcessingFailedException } from './webhook.exceptions.js';
import { SENDER_KEY_PATTERN, SenderKeyHeader, SenderKeyPipe } from './sender-key.pipe.js';
import { WebhookProcessor } from './webhook-processor.js';
import { WebhookRegistry } from './webhook-registry.js';
import { SignedDelivery, VerifyWebhookSignature } from './webhook-signature.guard.js';
import { WebhooksService } from './webhooks.service.js';
import { deliveryBodySchema, describeDeliveries } from './webhooks.openapi.js';

const SENDER_KEY_SCHEMA = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: SENDER_KEY_PATTERN,
} as const;

@ApiTags('webhooks')
@Controller('v2/webhooks')
export class WebhooksController {
  constructor(
    private readonly processor: WebhookProcessor,
    private readonly webhooks: WebhooksService,
    private readonly metrics: Metrics,
    private readonly registry: WebhookRegistry,
  ) {
    describeDeliveries(WebhooksController, registry.definitions());
  }

  /**
   * Receives a webhook: validates it, stores it, processes it, then answers. The global pipe
   * validates the envelope (WebhookDeliveryDto), then the registry the event name and the payload
   * (checkDelivery()). A redelivery of an event already processed answers with the first
   * delivery's id and is not processed again.
   */
  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Receive a webhook: validate, store, process, then answer.' })
  @VerifyWebhookSignature()
  @RequireScopes('webhooks:write')
  @ApiBody({ schema: deliveryBodySchema })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      "Identifies a delivery across retries; else the event's natural key does. 1–255 visible ASCII characters, else 422 naming the header.",
    schema: SENDER_KEY_SCHEMA,
  })
  @ApiHeader({
    name: 'webhook-id',
    required: false,
    description:
      'Same as Idempotency-Key (which wins when both are sent), with the same rule; for a signed delivery, the webhook-id alone identifies it.',
    schema: SENDER_KEY_SCHEMA,
  })
  @ApiDataResponse(WebhookAcceptedDto)
  @ApiUnprocessableEntityResponse({
    type: ValidationErrorDto,
    description:
      'Invalid delivery: `errors` names each bad field (`event`, `payload.<field>`) or header (`Idempotency-Key`, `webhook-id`).',
  })
  @ApiInternalServerErrorResponse({
    type: WebhookFailedDto,
    description:
      'The handler failed: the event is stored as failed; a redelivery or webhooks:replay runs it again.',
  })
  async receive(
    @Body() body: WebhookDeliveryDto,
    @SenderKeyHeader('idempotency-key', SenderKeyPipe) idempotencyKey: string | undefined,
    @SenderKeyHeader('webhook-id', SenderKeyPipe) webhookId: string | undefined,
    @CurrentPrincipal() principal: Principal,
    @SignedDelivery() signed: boolean,
  ): Promise<WebhookAcceptedDto> {
    const delivery = await this.registry.checkDelivery(body);
    const row = await this.processor.receive(delivery, {
      clientId: principal.clientId,
      // A signed delivery is known by its signed id: a replay under a new Idempotency-Key is a redelivery.
      senderKey: signed ? webhookId : (idempotencyKey ?? webhookId),
    });
    this.metrics.webhookDelivered(row.event, row.status === 'failed' ? 'failed' : 'processed');
    if (row.status === 'failed') throw new WebhookProcessingFailedException(row.id);
    return WebhookAcceptedDto.from(row);
  }

  /** Webhooks the calling client sent, newest first. */
  @Get()
  @ApiOperation({ summary: "The calling client's received webhooks, newest first (paged)." })
  @RequireScopes('webhooks:read')
  @ApiPaginatedResponse(WebhookEventDto)
  async list(
    @Query() query: WebhookListQueryDto,
    @CurrentPrincipal() principal: Principal,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Page<WebhookEventDto>> {
    const { page, release } = await this.webhooks.list(principal.clientId, query);
    releaseWhenAnswered(reply.raw, release);
    return page;
  }

  /** The accepted event names, each with its payload's JSON schema. */
  @Get('events')
  @ApiOperation({ summary: 'The events this service accepts, with their payload schemas.' })
  @RequireScopes('webhooks:read')
  @ApiExtraModels(WebhookEventTypeDto)
  @ApiOkResponse({
    schema: {
      type: 'object',
      required: ['data'],
      properties: { data: { type: 'array', items: { $ref: getSchemaPath(WebhookEventTypeDto) } } },
    },
  })
  types(): WebhookEventTypeDto[] {
    return this.webhooks.types();
  }

  @Get(':id')
  @ApiOperation({ summary: 'One received webhook of the calling client.' })
  @RequireScopes('webhooks:read')
  @ApiDataResponse(WebhookEventDto)
  @ApiNotFoundResponse({
    type: ErrorDto,
    description: 'Webhook not found: unknown, or sent by another client.',
  })
  async get(
    @Param('id') id: string,
    @CurrentPrincipal() principal: Principal,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<WebhookEventDto> {
    const { event, release } = await this.webhooks.get(principal.clientId, id);
    releaseWhenAnswered(reply.raw, release);
    return event;
  }
}
