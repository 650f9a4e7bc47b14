import { Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { EntityNotFoundError, type EntityManager } from 'typeorm';
import { isDatabaseUnavailable } from '../common/exceptions/database-errors.js';
import { Database } from '../database/index.js';
import { WebhookNotFoundException } from './webhook.exceptions.js';
import { WebhookCommits } from './webhook-commits.js';
import type { WebhookEvent } from './webhook-event.entity.js';
import { type FailedEvent, WebhookEventsRepository } from './webhook-events.repository.js';
import {
  UNEXPECTED_HANDLER_ERROR,
  type WebhookContext,
  WebhookFailure,
} from './webhook-handler.decorator.js';
import { checkPayload } from './webhook-payload.js';
import { type RegisteredWebhook, type ValidDelivery, WebhookRegistry } from './webhook-registry.js';
import { uuidv7 } from './uuid-v7.js';

const MAX_DEDUPE_KEY_LENGTH = 255;
const MAX_ERROR_LENGTH = 2000;
const REPLAY_BATCH = 100;

/** Who sent a delivery and under which key, for recognising redeliveries. */
export interface DeliverySource {
  /** OAuth client of the token (sender-chosen keys are only unique per sender). */
  clientId: string;
  /** `Idempotency-Key` or `webhook-id`, when sent. */
  senderKey?: string;
}

export type ReplayResult = 'processed' | 'failed' | 'skipped';

/** What a replay did with one event; `row` is null when the event was deleted meanwhile. */
export interface ReplayOutcome {
  id: string;
  row: WebhookEvent | null;
  result: ReplayResult;
}

/** A handler threw; carries the cause out of the transaction so that it rolls back. */
class HandlerFailure extends Error {
  /** What the event's `last_error` says: a WebhookFailure's message, else a fixed sentence. */
  constructor(cause: unknown) {
    super(cause instanceof WebhookFailure ? cause.message : UNEXPECTED_HANDLER_ERROR, { cause });
  }
}

/**
 * The write side of webhooks: store, process, record failures, replay.
 *
 * Guarantees and how they are kept:
 * - First delivery wins: the event row is inserted with "ON CONFLICT DO NOTHING" against the
 *   unique (client_id, event, dedupe_key) constraint, in the same transaction as the handler. A concurrent
 *   duplicate waits for that transaction (PostgreSQL's unique index; SQLite's single writer) and
 *   then finds the row instead of running the handler again.
 * - One transaction for the event and its handler on the happy path: insert (already marked
 *   processed), handler's writes, commit (shared with the deliveries received together, each in
 *   a savepoint of its own: WebhookCommits). The handler runs once per delivery. The answer is
 *   sent after the commit, so an acknowledged event survives a crash, and a crash before it
 *   leaves nothing behind for the sender's retry to trip on.
 * - A throwing handler rolls its event and its writes back, alone; the failure is then recorded
 *   in a transaction of its own, and a redelivery or a replay claims the failed row (UPDATE …
 *   WHERE status = 'failed', so only one claimer runs the handler) and processes it again.
 */
@Injectable()
export class WebhookProcessor {
  private readonly logger = new Logger(WebhookProcessor.name);

  constructor(
    private readonly db: Database,
    private readonly commits: WebhookCommits,
    private readonly events: WebhookEventsRepository,
    private readonly registry: WebhookRegistry,
  ) {}

  /**
   * Stores and processes a validated delivery. Resolves to the event's row: `processed` (this
   * delivery's, or the first delivery's for a redelivery) or `failed` (the caller answers 500).
   */
  async receive(delivery: ValidDelivery, source: DeliverySource): Promise<WebhookEvent> {
    const { webhook, payload, stored } = delivery;
    const now = new Date();
    const row: WebhookEvent = {
      id: uuidv7(now.getTime()),
      clientId: source.clientId,
      event: webhook.event,
      dedupeKey: dedupeKeyOf(webhook, payload, source.senderKey),
      payload: stored,
      status: 'processed',
      attempts: 1,
      lastError: null,
      receivedAt: now,
      processedAt: now,
      lastAttemptAt: now,
    };
    const info = { eventId: row.id, clientId: row.clientId, attempt: 1 };
    try {
      // What the unique constraint compares: a shared commit stores its events in this order.
      const key = `${row.clientId}\u0000${row.event}\u0000${row.dedupeKey}`;
      return await this.commits.run(key, async (manager) => {
        if (await this.events.insertUnlessDuplicate(manager, row)) {
          await runHandler(webhook, payload, { manager, ...info });
          return row;
        }
        const first = await this.events.findByKey(manager, row);
        return first.status === 'failed' ? (await this.retry(manager, first)).row : first;
      });
    } catch (error) {
      if (!(error instanceof HandlerFailure)) throw error;
      return this.recordFailure(row, error);
    }
  }

  /**
   * Re-runs one failed event; a processed one is left alone ('skipped'), and so is one deleted
   * while the replay ran (a prune beside it): it is gone, there is nothing left to process. One
   * that another claimer (a replay beside this one, a redelivery) took first is skipped too: its
   * outcome is that claimer's.
   */
  async replay(id: string): Promise<ReplayOutcome> {
    const row = await this.events.findById(id);
    if (!row) throw new WebhookNotFoundException();
    if (row.status !== 'failed') return { id, row, result: 'skipped' };
    let settled: WebhookEvent | null;
    try {
      const retried = await this.db.transaction((manager) => this.retry(manager, row));
      if (!retried.claimed) return { id, row: retried.row, result: 'skipped' };
      settled = retried.row;
    } catch (error) {
      // retry() re-reads the row it could not claim: deleted since it was read above.
      if (error instanceof EntityNotFoundError) return { id, row: null, result: 'skipped' };
      if (!(error instanceof HandlerFailure)) throw error;
      settled = await this.recordReplayFailure(row, error);
    }
    if (!settled) return { id, row: null, result: 'skipped' };
    return { id, row: settled, result: settled.status === 'processed' ? 'processed' : 'failed' };
  }

  /**
   * Re-runs every event that had failed when the replay started, oldest attempt first. One that
   * fails again gets a new attempt time, after the start, and so is not retried twice. One
   * deleted meanwhile (pruned) is skipped, and the replay goes on. `unread`: those of the events
   * failed at the start that were gone (deleted, or processed by a redelivery) before the replay
   * came to them, and so have no outcome of their own.
   */
  async replayFailed(): Promise<{ outcomes: ReplayOutcome[]; unread: number }> {
    const started = new Date();
    const failedAtStart = await this.events.countFailedBefore(started);
    const results: ReplayOutcome[] = [];
    let after: FailedEvent | undefined;
    for (;;) {
      const batch = await this.events.failedBefore(started, after, REPLAY_BATCH);
      for (const { id } of batch) {
        results.push(
          await this.replay(id).catch((error: unknown) => {
            if (error instanceof WebhookNotFoundException) {
              return { id, row: null, result: 'skipped' as const };
            }
            throw error;
          }),
        );
      }
      if (batch.length < REPLAY_BATCH) {
        return { outcomes: results, unread: Math.max(0, failedAtStart - results.length) };
      }
      after = batch[batch.length - 1];
    }
  }

  /**
   * A replayed handler failed again: one more attempt on the stored row, never a new row (unlike
   * a delivery's failure, recordFailure()), so that an event pruned meanwhile stays deleted.
   * Resolves to the row as stored, or null when it is gone.
   */
  private async recordReplayFailure(
    row: WebhookEvent,
    failure: HandlerFailure,
  ): Promise<WebhookEvent | null> {
    this.logger.error(
      { err: failure.cause, webhookId: row.id, event: row.event },
      'webhook handler failed',
    );
    const lastError = failure.message.slice(0, MAX_ERROR_LENGTH);
    return this.db.transaction(async (manager) => {
      await this.events.recordAnotherFailure(manager, row, lastError);
      return this.events.findByIdIn(manager, row.id).catch((error: unknown) => {
        if (error instanceof EntityNotFoundError) return null;
        throw error;
      });
    });
  }

  /**
   * Claims a failed event and runs its handler again inside `manager`'s transaction. Resolves to
   * the processed row (`claimed`), or to the row as another claimer left it; a handler failure
   * is thrown.
   */
  private async retry(
    manager: EntityManager,
    failed: WebhookEvent,
  ): Promise<{ row: WebhookEvent; claimed: boolean }> {
    const claimed = await this.events.claimFailed(manager, failed.id);
    const row = await this.events.findByIdIn(manager, failed.id);
    if (!claimed) return { row, claimed };

    const webhook = this.registry.find(row.event);
    if (!webhook) {
      throw new HandlerFailure(
        new WebhookFailure(`No handler is registered for the event ${row.event}.`),
      );
    }
    const checked = await checkPayload(webhook, JSON.parse(row.payload) as Record<string, unknown>);
    if (checked.errors) {
      throw new HandlerFailure(
        new WebhookFailure(
          `The stored payload is not valid any more: ${JSON.stringify(checked.errors)}`,
        ),
      );
    }
    await runHandler(webhook, checked.payload, {
      manager,
      eventId: row.id,
      clientId: row.clientId,
      attempt: row.attempts,
    });
    return { row, claimed };
  }

  /**
   * Records a handler failure after its transaction rolled back: a new failed row (attempt 1),
   * or one more attempt on the existing failed row. Resolves to the row as stored, which may be
   * `processed` if a concurrent delivery of the same event succeeded meanwhile.
   */
  private async recordFailure(row: WebhookEvent, failure: HandlerFailure): Promise<WebhookEvent> {
    this.logger.error(
      { err: failure.cause, webhookId: row.id, event: row.event },
      'webhook handler failed',
    );
    const lastError = failure.message.slice(0, MAX_ERROR_LENGTH);
    return this.db.transaction(async (manager) => {
      const failed: WebhookEvent = {
        ...row,
        status: 'failed',
        attempts: 1,
        lastError,
        processedAt: null,
        lastAttemptAt: new Date(),
      };
      if (await this.events.insertUnlessDuplicate(manager, failed)) return failed;
      await this.events.recordAnotherFailure(manager, row, lastError);
      return this.events.findByKey(manager, row);
    });
  }
}

async function runHandler(webhook: RegisteredWebhook, payload: object, context: WebhookContext) {
  try {
    await webhook.handler.handle(payload, context);
  } catch (error) {
    // A database that does not answer is the service's failure, not the handler's: 503.
    if (isDatabaseUnavailable(error)) throw error;
    throw new HandlerFailure(error);
  }
}

/**
 * What identifies a redelivery from one client (keys are stored with the client: two platforms
 * may well both number their messages from 1): the sender's key when it sent one, else the
 * event's natural key. Keys too long for the column are hashed.
 */
export function dedupeKeyOf(
  webhook: RegisteredWebhook,
  payload: object,
  senderKey: string | undefined,
): string {
  let key: string;
  if (senderKey) {
    key = `sender:${senderKey}`;
  } else {
    const natural = webhook.dedupeKey(payload);
    // A missing key would make every later event a "redelivery" of the first: refuse instead.
    if (natural === undefined || natural === null || natural === '') {
      throw new Error(`The dedupeKey of ${webhook.handlerName} gave no key for a valid payload.`);
    }
    key = `natural:${String(natural)}`;
  }
  return key.length <= MAX_DEDUPE_KEY_LENGTH
    ? key
    : `sha256:${createHash('sha256').update(key).digest('hex')}`;
}
