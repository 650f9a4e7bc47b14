import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Redis } from 'ioredis';
import type { Environment } from '../config/environment.js';
import { Database, PostgresNotifications } from '../database/index.js';
import { RedisConnection } from './redis-connection.js';

/** What instances tell each other. */
export type ClusterTopic = 'token-state' | 'signing-keys' | 'webhook-secrets';
const TOPICS: readonly ClusterTopic[] = ['token-state', 'signing-keys', 'webhook-secrets'];

/**
 * A message, or null after the channel was (re)established: messages sent meanwhile may be lost,
 * so a listener should reload what it keeps.
 */
export type ClusterListener = (message: string | null) => void | Promise<void>;

/**
 * Tells every instance sharing the database about a change, within about a second: Redis pub/sub
 * when REDIS_URL is set, otherwise PostgreSQL LISTEN/NOTIFY. On SQLite nothing is sent (instances
 * there are processes on one machine, and they poll). Delivery is best effort: a listener keeps
 * its periodic refresh as the safety net. Every instance, the sender included, receives each
 * message.
 */
@Injectable()
export class ClusterEvents implements OnModuleDestroy {
  private readonly logger = new Logger(ClusterEvents.name);
  private readonly listeners = new Map<ClusterTopic, ClusterListener[]>();
  private readonly transport?: Transport;
  private started = false;

  constructor(config: ConfigService<Environment, true>, redis: RedisConnection, db: Database) {
    const deliver = (topic: ClusterTopic, message: string | null) => this.deliver(topic, message);
    if (redis.client) this.transport = new RedisTransport(redis, deliver, this.logger);
    else {
      const notifications = PostgresNotifications.on(
        db,
        config.get('DATABASE_URL', { infer: true }),
        TOPICS.map(channel),
        (name, payload) => {
          const topic = TOPICS.find((t) => channel(t) === name);
          if (topic) deliver(topic, payload);
        },
        this.logger,
      );
      if (notifications) this.transport = new PostgresTransport(notifications);
    }
  }

  /** The channel the service's instances talk on, for the start-up log. */
  get channel(): 'redis' | 'postgres' | 'none' {
    return this.transport?.name ?? 'none';
  }

  subscribe(topic: ClusterTopic, listener: ClusterListener): void {
    this.listeners.set(topic, [...(this.listeners.get(topic) ?? []), listener]);
    if (!this.started && this.transport) {
      this.started = true;
      this.transport.start();
    }
  }

  /** Never fails: a lost message is repaired by the listeners' periodic refresh. */
  async publish(topic: ClusterTopic, message = ''): Promise<void> {
    try {
      await this.transport?.publish(topic, message);
    } catch (error) {
      this.logger.warn(
        `could not tell other instances about a ${topic} change (${(error as Error).message}); they will see it at their next refresh`,
      );
    }
  }

  async onModuleDestroy() {
    await this.transport?.stop();
  }

  private deliver(topic: ClusterTopic, message: string | null) {
    for (const listener of this.listeners.get(topic) ?? []) {
      Promise.resolve()
        .then(() => listener(message))
        .catch((error: unknown) =>
          this.logger.warn({ err: error }, `a ${topic} listener failed on a cluster message`),
        );
    }
  }
}

interface Transport {
  readonly name: 'redis' | 'postgres';
  start(): void;
  publish(topic: ClusterTopic, message: string): Promise<void>;
  stop(): Promise<void>;
}
type Deliver = (topic: ClusterTopic, message: string | null) => void;

/** Channels are per Redis database number, like the keys, so deployments sharing a server stay apart. */
class RedisTransport implements Transport {
  readonly name = 'redis';
  private subscriber?: Redis;
  private readonly prefix: string;

  constructor(
    private readonly redis: RedisConnection,
    private readonly deliver: Deliver,
    private readonly logger: Logger,
  ) {
    this.prefix = `company-api:${redis.client!.options.db ?? 0}:`;
  }

  start() {
    const subscriber = (this.subscriber = this.redis.subscriber());
    const channels = TOPICS.map((t) => this.prefix + t);
    // ioredis subscribes again by itself after a reconnect, once a SUBSCRIBE has succeeded; one
    // that failed (Redis away when the instance started) is sent again when Redis is back.
    // Messages sent meanwhile are lost: every topic is then refreshed as if one had come.
    let subscribed = false;
    let pending = false;
    let missed = false;
    const subscribe = () => {
      if (subscribed || pending) return;
      pending = true;
      subscriber.subscribe(...channels).then(
        () => {
          pending = false;
          subscribed = true;
          if (missed) TOPICS.forEach((topic) => this.deliver(topic, null));
        },
        (error: Error) => {
          pending = false;
          missed = true;
          this.logger.warn(`could not subscribe to cluster messages on Redis (${error.message})`);
        },
      );
    };
    let connectedBefore = false;
    subscriber.on('ready', () => {
      if (!subscribed) subscribe();
      else if (connectedBefore) TOPICS.forEach((topic) => this.deliver(topic, null));
      connectedBefore = true;
    });
    subscriber.on('message', (channel: string, message: string) => {
      const topic = channel.slice(this.prefix.length) as ClusterTopic;
      if (channel.startsWith(this.prefix) && TOPICS.includes(topic)) this.deliver(topic, message);
    });
    subscribe();
  }

  async publish(topic: ClusterTopic, message: string) {
    await this.redis.client!.publish(this.prefix + topic, message);
  }

  async stop() {
    // RedisConnection closes its connections.
  }
}

/** PostgreSQL LISTEN/NOTIFY (the data layer's PostgresNotifications), one channel per topic. */
class PostgresTransport implements Transport {
  readonly name = 'postgres';

  constructor(private readonly notifications: PostgresNotifications) {}

  start() {
    this.notifications.start();
  }

  publish(topic: ClusterTopic, message: string) {
    return this.notifications.notify(channel(topic), message);
  }

  stop() {
    return this.notifications.stop();
  }
}

/** A PostgreSQL identifier: lower case, no quoting needed. */
const channel = (topic: ClusterTopic) => `company_api_${topic.replace('-', '_')}`;
