import { applyDecorators, Injectable, Type } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { EntityManager } from 'typeorm';

/** What a handler receives besides the payload. */
export interface WebhookContext {
  /**
   * The transaction the event is stored in: what the handler writes through it (repositories:
   * `manager.getRepository(Entity)`, query builders) commits with the event or not at all, and
   * its reads see those writes.
   */
  manager: EntityManager;
  /** Id of the stored webhook event (the `id` the sender gets back). */
  eventId: string;
  /** The OAuth client that sent it (ids in a payload are that sender's own). */
  clientId: string;
  /** 1 on the first run, then 2, 3… on redeliveries and replays of a failed event. */
  attempt: number;
}

/**
 * A failure a handler explains to the event's sender: its message is the event's `last_error`
 * (GET /v2/webhooks/{id}), so it says what the sender can act on ("invoice 42 is unknown").
 * Any other error thrown is shown there as UNEXPECTED_HANDLER_ERROR: its text (a database's
 * message, a table's name) is for the service's log, where it is written with the event's id.
 */
export class WebhookFailure extends Error {
  override readonly name = 'WebhookFailure';
}

/** The `last_error` of an event whose handler threw anything but a WebhookFailure. */
export const UNEXPECTED_HANDLER_ERROR =
  'The handler failed unexpectedly; the details are in the service log, under the event id.';

/**
 * A provider that processes one webhook event. handle() runs once per accepted delivery, inside
 * the transaction that stores the event. Throwing marks the event failed (500 to the sender) and
 * undoes the handler's writes; a redelivery or a replay runs it again later. Throw a
 * WebhookFailure to tell the sender why.
 */
export interface WebhookEventHandler<P extends object = object> {
  handle(payload: P, context: WebhookContext): Promise<void>;
}

export interface WebhookHandlerOptions<P extends object = object> {
  /** The event name senders put in `event`. Unique across the application. */
  event: string;
  /** class-validator DTO of `payload`; errors are reported under `payload.<field>`. */
  payload: Type<P>;
  /**
   * The event's natural identity, used to recognise a redelivery when the sender sends neither
   * `Idempotency-Key` nor `webhook-id` (e.g. the attempt id of a completed attempt).
   */
  dedupeKey: (payload: P) => string | number;
}

/** The discoverable marker; read by WebhookRegistry. Use @WebhookHandler() in modules. */
export const WebhookHandlerMarker = DiscoveryService.createDecorator<WebhookHandlerOptions<any>>();

/**
 * Declares a provider as the handler of one webhook event, with its payload DTO and natural
 * dedupe key. Adding the provider to any module's `providers` is all it takes: the registry
 * discovers it at start-up.
 */
export function WebhookHandler<P extends object>(options: WebhookHandlerOptions<P>) {
  return applyDecorators(Injectable(), WebhookHandlerMarker(options));
}
