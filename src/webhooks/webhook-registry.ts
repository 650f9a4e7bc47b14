import { Injectable, OnModuleInit, Type } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { ValidationFailedException } from '../common/exceptions/api.exception.js';
import type { WebhookDeliveryDto } from './dto/webhook-delivery.dto.js';
import {
  type WebhookEventHandler,
  WebhookHandlerMarker,
  type WebhookHandlerOptions,
} from './webhook-handler.decorator.js';
import { checkPayload } from './webhook-payload.js';

export const MAX_EVENT_NAME_LENGTH = 100;

export interface WebhookDefinition<P extends object = object> extends WebhookHandlerOptions<P> {
  /** Class name of the handler, for messages. */
  handlerName: string;
  /** The module that provides it, for messages. */
  moduleName: string;
}

export interface RegisteredWebhook<P extends object = object> extends WebhookDefinition<P> {
  handler: WebhookEventHandler<P>;
}

/** A delivery that passed validation: its event's handler, the typed payload, and the raw one. */
/** What a stored event's payload may take (docs/contract.md §6): as much as a request body. */
const MAX_STORED_PAYLOAD_BYTES = 1024 * 1024;

export interface ValidDelivery {
  webhook: RegisteredWebhook;
  /** The event's payload DTO instance, handed to the handler. */
  payload: object;
  /** The payload as received (unknown fields included) in JSON, as it is stored. */
  stored: string;
}

/** Start-up refusal: two providers claim one event name, or a handler is unusable. */
export class WebhookRegistrationError extends Error {
  override readonly name = 'WebhookRegistrationError';
}

/**
 * The accepted webhook events, collected from every provider marked @WebhookHandler(). It is the
 * only source of event names: the webhooks module itself never names one.
 */
@Injectable()
export class WebhookRegistry implements OnModuleInit {
  private readonly byEvent = new Map<string, RegisteredWebhook>();

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit() {
    const where = (d: WebhookDefinition) => `${d.handlerName} of ${d.moduleName}`;
    for (const { definition, wrapper } of this.discover()) {
      const existing = this.byEvent.get(definition.event);
      if (existing) {
        throw new WebhookRegistrationError(
          `Two handlers for the webhook event "${definition.event}": ${where(existing)} and ${where(definition)}. Event names are unique across the application: rename one.`,
        );
      }
      const handler = wrapper.instance as Partial<WebhookEventHandler> | undefined;
      // A request-scoped handler has no instance here and none outside a request.
      if (!wrapper.isDependencyTreeStatic() || typeof handler?.handle !== 'function') {
        throw new WebhookRegistrationError(
          `Webhook handler ${definition.handlerName} must be a singleton provider with a handle(payload, context) method.`,
        );
      }
      this.byEvent.set(definition.event, {
        ...definition,
        handler: handler as WebhookEventHandler,
      });
    }
  }

  find(event: string): RegisteredWebhook | undefined {
    return this.byEvent.get(event);
  }

  /**
   * The second half of POST /v2/webhooks' validation, after the global pipe has validated the
   * envelope (WebhookDeliveryDto): the event must be registered, and the payload must pass its
   * event's DTO (checkPayload(): unknown fields kept, errors under `payload.<field>`). Else 422.
   */
  async checkDelivery(delivery: WebhookDeliveryDto): Promise<ValidDelivery> {
    const webhook = this.find(delivery.event);
    if (!webhook) {
      const names = this.events();
      throw new ValidationFailedException({
        event: [
          names.length
            ? `The event must be one of: ${names.join(', ')}.`
            : 'No webhook events are accepted.',
        ],
      });
    }
    const checked = await checkPayload(webhook, delivery.payload);
    if (checked.errors) throw new ValidationFailedException(checked.errors);
    // Numbers are stored in JavaScript's spelling, which can be longer than the sender's (`1e20`
    // is `100000000000000000000`): the 1 MiB a stored event may take is checked on what is stored.
    const stored = JSON.stringify(delivery.payload);
    if (
      stored.length > MAX_STORED_PAYLOAD_BYTES / 3 &&
      Buffer.byteLength(stored) > MAX_STORED_PAYLOAD_BYTES
    ) {
      throw new ValidationFailedException({
        payload: ['The payload must be at most 1 MiB (1,048,576 bytes) as stored JSON.'],
      });
    }
    return { webhook, payload: checked.payload, stored };
  }

  events(): string[] {
    return [...this.byEvent.keys()].sort();
  }

  /**
   * Every declared event, sorted by name, read from class metadata: unlike find(), this works
   * before the application is initialised, which is when the OpenAPI document is built.
   */
  definitions(): WebhookDefinition[] {
    return this.discover()
      .map(({ definition }) => definition)
      .sort((a, b) => a.event.localeCompare(b.event));
  }

  private discover() {
    return this.discovery.getProviders({ metadataKey: WebhookHandlerMarker.KEY }).map((wrapper) => {
      const options = this.discovery.getMetadataByDecorator(WebhookHandlerMarker, wrapper);
      const handlerName = (wrapper.metatype as Type | undefined)?.name ?? String(wrapper.name);
      if (
        !options?.event ||
        typeof options.event !== 'string' ||
        options.event.length > MAX_EVENT_NAME_LENGTH ||
        typeof options.payload !== 'function' ||
        typeof options.dedupeKey !== 'function'
      ) {
        throw new WebhookRegistrationError(
          `Webhook handler ${handlerName} needs an event name (at most ${MAX_EVENT_NAME_LENGTH} characters), a payload DTO class and a dedupeKey function.`,
        );
      }
      const moduleName = wrapper.host?.name ?? 'an unknown module';
      return { definition: { ...options, handlerName, moduleName } as WebhookDefinition, wrapper };
    });
  }
}
