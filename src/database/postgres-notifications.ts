import type { Logger } from '@nestjs/common';
import pg from 'pg';
import type { Database } from './database.js';

const RECONNECT_MS = 1000;

/** What the listener is told: a notification, or null on a channel after a reconnect. */
type Notified = (channel: string, payload: string | null) => void;

/**
 * PostgreSQL LISTEN/NOTIFY for messages between instances, on a connection of its own (a pooled
 * one would be handed to other queries). A lost connection is reopened every second; after a
 * reconnect every channel is told `null` (notifications sent meanwhile are lost, so a listener
 * reloads what it keeps). Not after the first connection: listeners load their state at start.
 */
export class PostgresNotifications {
  private client?: pg.Client;
  private reconnect?: NodeJS.Timeout;
  private stopped = false;
  private reportedLoss = false;
  private connectedBefore = false;

  /**
   * LISTEN/NOTIFY on `db`'s PostgreSQL server at `url`, or undefined on SQLite, whose instances
   * are processes on one machine with nothing to carry messages between them.
   */
  static on(
    db: Database,
    url: string,
    channels: readonly string[],
    notified: Notified,
    logger: Logger,
  ): PostgresNotifications | undefined {
    if (db.dialect !== 'postgres') return undefined;
    return new PostgresNotifications(url, db, channels, notified, logger);
  }

  private constructor(
    private readonly url: string,
    private readonly db: Database,
    private readonly channels: readonly string[],
    private readonly notified: Notified,
    private readonly logger: Logger,
  ) {}

  start() {
    void this.connect();
  }

  async notify(channel: string, payload: string) {
    await this.db.execute(
      this.db.sql('SELECT pg_notify(:channel, :payload)', { channel, payload }),
    );
  }

  async stop() {
    this.stopped = true;
    clearTimeout(this.reconnect);
    await this.client?.end().catch(() => undefined);
  }

  private async connect() {
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 3000 });
    this.client = client;
    client.on('notification', ({ channel, payload }) => {
      if (this.channels.includes(channel)) this.notified(channel, payload ?? '');
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      for (const channel of this.channels) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      this.lost(client, error as Error);
      return;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    if (this.connectedBefore) this.channels.forEach((channel) => this.notified(channel, null));
    this.connectedBefore = true;
    if (this.reportedLoss) this.logger.log('listening for cluster messages again');
    this.reportedLoss = false;
  }

  private lost(client: pg.Client, error?: Error) {
    if (this.stopped || client !== this.client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    if (!this.reportedLoss) {
      this.reportedLoss = true;
      this.logger.warn(
        `lost the connection that listens for cluster messages${error ? ` (${error.message})` : ''}; retrying every second, periodic refresh meanwhile`,
      );
    }
    this.reconnect = setTimeout(() => {
      if (!this.stopped) void this.connect();
    }, RECONNECT_MS);
  }
}
