import { Column, Entity, Index, PrimaryColumn, Unique } from 'typeorm';

export const WEBHOOK_STATUSES = ['processed', 'failed'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/**
 * One received webhook. A row is only ever committed as `processed` (inserted in the same
 * transaction as the handler's writes) or `failed` (recorded after the handler's transaction
 * rolled back), so a row never claims work that did not happen.
 */
@Entity({ name: 'webhook_events' })
@Unique('UQ_webhook_events_client_event_dedupe_key', ['clientId', 'event', 'dedupeKey'])
@Index('UQ_webhook_events_seq', ['seq'], { unique: true })
@Index('IDX_webhook_events_client_id_seq_status_event', ['clientId', 'seq', 'status', 'event'])
@Index('IDX_webhook_events_status_last_attempt_at_id', ['status', 'lastAttemptAt', 'id'])
export class WebhookEvent {
  /** UUIDv7: time-ordered, so ordering by id is ordering by arrival. */
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  /** The OAuth client that sent it: only that client sees it; '' for a sender never recorded. */
  @Column({ name: 'client_id', type: 'varchar', length: 64, default: '' })
  clientId: string;

  @Column({ type: 'varchar', length: 100 })
  event: string;

  /**
   * Insertion number, given by the database (a trigger): the list's order and the key of its
   * position blocks (migration CreateListPositions). Never written by the service.
   */
  @Column({ type: 'bigint', nullable: true, insert: false, update: false })
  seq?: string | null;

  /** What makes a redelivery recognisable; see dedupeKeyOf(). Unique per client and event. */
  @Column({ name: 'dedupe_key', type: 'varchar', length: 255 })
  dedupeKey: string;

  /** The payload exactly as received (JSON text), unknown fields included. */
  @Column({ type: 'text' })
  payload: string;

  @Column({ type: 'varchar', length: 16 })
  status: WebhookStatus;

  /** How many times the handler ran. */
  @Column({ type: 'integer' })
  attempts: number;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError: string | null;

  @Column({ name: 'received_at', type: Date })
  receivedAt: Date;

  @Column({ name: 'processed_at', type: Date, nullable: true })
  processedAt: Date | null;

  /** When the handler last ran (processed_at for a processed event); retention counts from it. */
  @Column({ name: 'last_attempt_at', type: Date, nullable: true })
  lastAttemptAt: Date | null;
}
