import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WebhookDeliveryPipe } from './webhook-delivery.pipe.js';
import { WebhookEvent } from './webhook-event.entity.js';
import { WebhookProcessor } from './webhook-processor.js';
import { WebhookRegistry } from './webhook-registry.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Webhook intake (docs/contract.md §6). Knows no event: every @WebhookHandler() provider of any module
 * is discovered at start-up.
 */
@Module({
  imports: [DiscoveryModule, TypeOrmModule.forFeature([WebhookEvent])],
  controllers: [WebhooksController],
  providers: [WebhookRegistry, WebhookProcessor, WebhooksService, WebhookDeliveryPipe],
  exports: [WebhookProcessor],
})
export class WebhooksModule {}
