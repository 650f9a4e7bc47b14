import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { WebhookCommits } from './webhook-commits.js';
import { DatabaseModule } from '../database/index.js';
import { WebhookRetention } from './webhook-retention.service.js';
import { WebhookSeeder } from './webhook-seeder.service.js';
import { WebhookEventsRepository, webhookEventsList } from './webhook-events.repository.js';
import { WebhookProcessor } from './webhook-processor.js';
import { WebhookRegistry } from './webhook-registry.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksService } from './webhooks.service.js';
import { WebhookSignatureGuard, WebhookSignatureHeadersGuard } from './webhook-signature.guard.js';
import { WebhookSignatures } from './webhook-signatures.service.js';
import { WebhookSigningSecretsRepository } from './webhook-signing-secrets.repository.js';
import { WebhookSigningSecretsService } from './webhook-signing-secrets.service.js';

/**
 * Webhook intake (docs/contract.md §6). Knows no event: every @WebhookHandler() provider of any module
 * is discovered at start-up.
 */
@Module({
  imports: [DiscoveryModule, DatabaseModule.forFeature({ lists: [webhookEventsList] })],
  controllers: [WebhooksController],
  providers: [
    WebhookRegistry,
    WebhookEventsRepository,
    WebhookCommits,
    WebhookProcessor,
    WebhooksService,
    WebhookRetention,
    WebhookSeeder,
    WebhookSigningSecretsRepository,
    WebhookSigningSecretsService,
    WebhookSignatures,
    WebhookSignatureGuard,
    WebhookSignatureHeadersGuard,
  ],
  exports: [WebhookProcessor, WebhookRetention, WebhookSeeder],
})
export class WebhooksModule {}
