import { applyDecorators, Injectable, Type } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { EntityManager } from 'typeorm';
import type { RowInsert } from '../database/insert-with-dependents.js';

/** Which stored event a handler is processing. */
export interface WebhookEventInfo {
  /** Id of the stored webhook event (the `id` the sender gets back). */
  eventId: string;
  /** The OAuth client that sent it (ids in a payload are that sender's own). */
  clientId: string;
  /** 1 on the first run, then 2, 3… on redeliveries and replays of a failed event. */
  attempt: number;
}

/** What a handler receives besides the payload. */
export interface WebhookContext extends WebhookEventInfo {
  /** The transaction the event is processed in: every write through it commits or rolls back with the event. */
  manager: EntityManager;
}

/**
 * A provider that processes one webhook event. Throwing marks the event failed (500 to the
 * sender). It may run more than once for one delivery (its group is rolled back and run again
 * when another delivery's handler throws): only the run that commits counts, so it writes through
 * `context.manager` only.
 */
export interface WebhookEventHandler<P extends object = object> {
  handle(payload: P, context: WebhookContext): Promise<void>;
}

/**
 * A provider whose whole work for an event is rows to add, each skipped when it collides with a
 * stored row (`INSERT … ON CONFLICT DO NOTHING`), such as recording a reported fact. Prefer it to
 * handle() where it fits: the rows are stored with the event in one commit, and on PostgreSQL in
 * the event's own statement, shared with the deliveries received together (about 1.5 times the
 * deliveries per second of a handle() handler, docs/benchmarks.md). rows() must not write anything
 * itself; throwing marks the event failed, as with handle().
 */
export interface WebhookRowsHandler<P extends object = object> {
  rows(payload: P, event: WebhookEventInfo): RowInsert[];
}

/** A handler of either kind. */
export type AnyWebhookHandler<P extends object = object> =
  WebhookEventHandler<P> | WebhookRowsHandler<P>;

/** True for a handler that declares rows instead of writing them itself. */
export function declaresRows<P extends object>(
  handler: AnyWebhookHandler<P>,
): handler is WebhookRowsHandler<P> {
  return typeof (handler as Partial<WebhookRowsHandler<P>>).rows === 'function';
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
  /**
   * True when every write of the handler is one statement whose effect does not depend on rows
   * other deliveries write (an insert, `ON CONFLICT DO NOTHING`, `UPDATE … SET n = n + 1`): on
   * PostgreSQL such deliveries then run concurrently inside their shared transaction and their
   * inserts travel together (Database.groupedTransaction). Leave it unset for a handler that
   * reads and then writes, or locks rows (`FOR UPDATE` does not separate works of one
   * transaction): its deliveries run one after the other. (A WebhookRowsHandler needs no flag.)
   */
  concurrent?: boolean;
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
