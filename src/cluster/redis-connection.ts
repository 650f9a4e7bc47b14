import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { type Environment, InvalidEnvironmentError } from '../config/environment.js';

const READY_WAIT_MS = 2000;

/**
 * The Redis named by REDIS_URL, when set: one command connection (throttling counters,
 * publishing) and subscriber connections made from it. Commands never queue while Redis is away
 * (they fail at once, so callers fall back instead of waiting), nor wait long on a Redis that
 * does not answer; ioredis reconnects by itself.
 * Its loss and its return are each logged once.
 */
@Injectable()
export class RedisConnection implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Redis');
  readonly client?: Redis;
  private readonly subscribers: Redis[] = [];
  private down = false;
  /** Why REDIS_URL cannot be used as written (a database this Redis does not have). */
  private refusal?: string;
  /** Past onModuleInit: a refusal then is logged; before it, it fails the start (one line). */
  private started = false;

  constructor(config: ConfigService<Environment, true>) {
    const url = config.get('REDIS_URL', { infer: true });
    if (url) this.client = this.watch(new Redis(url, OPTIONS), 'commands');
  }

  /** Waits a moment for the first connection, so that a healthy start uses Redis at once. */
  async onModuleInit() {
    if (this.client && this.client.status !== 'ready') {
      // An error ends the wait too: Redis is away, and the service starts without it.
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), READY_WAIT_MS);
      await once(this.client, 'ready', { signal: abort.signal }).catch(() => undefined);
      clearTimeout(timer);
      if (this.refusal) throw new InvalidEnvironmentError(this.refusal);
    }
    this.started = true;
  }

  /**
   * A new connection for SUBSCRIBE (a subscribed connection can run nothing else). Its SUBSCRIBE
   * waits for the connection (queued), and ioredis subscribes again after every reconnect.
   */
  subscriber(): Redis {
    const subscriber = this.watch(
      // No command time limit: a SUBSCRIBE sent while Redis is away waits for it, and ioredis
      // subscribes again after every reconnect only to what was subscribed.
      this.client!.duplicate({ enableOfflineQueue: true, commandTimeout: undefined }),
      'subscriptions',
    );
    this.subscribers.push(subscriber);
    return subscriber;
  }

  async onModuleDestroy() {
    await Promise.all(
      [this.client, ...this.subscribers].map(async (redis) => {
        if (!redis) return;
        // quit() waits for a reply that never comes while disconnected.
        if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
        else redis.disconnect();
      }),
    );
  }

  private watch(redis: Redis, role: string): Redis {
    redis.on('error', (error: Error) => {
      // ioredis goes on with database 0 when its SELECT fails: never use another database than
      // the one named. At start this refuses the start; later (Redis back with fewer
      // databases), Redis is left out as if unreachable.
      if (/DB index is out of range/i.test(error.message)) {
        this.refusal = `Invalid configuration: REDIS_URL names Redis database ${redis.options.db}, which this Redis does not have (its "databases" setting).`;
        if (this.started) this.logger.error(`${this.refusal} Redis is not used.`);
        redis.disconnect();
        return;
      }
      if (this.down) return;
      this.down = true;
      this.logger.warn(
        `Redis unreachable (${error.message}): throttling counts per instance until it is back`,
      );
    });
    redis.on('ready', () => {
      if (!this.down || role !== 'commands') return;
      this.down = false;
      this.logger.log('Redis reachable again: throttling counters are shared again');
    });
    return redis;
  }
}

const OPTIONS = {
  enableOfflineQueue: false,
  // Commands issued in the same tick (concurrent token requests' counters) go out as one write
  // (ioredis leaves (un)subscribe out of it by itself): docs/benchmarks.md, sixth session.
  enableAutoPipelining: true,
  maxRetriesPerRequest: 1,
  connectTimeout: 2000,
  // A Redis that is connected but does not answer (stopped, overloaded, cut off without a reset)
  // fails a command after this, so that the callers fall back (throttling counts in memory, a
  // publish is left to the periodic refresh) instead of waiting with the request.
  commandTimeout: 500,
  // Quickly back, then every second at most: a returning Redis is used within a second.
  retryStrategy: (attempt: number) => Math.min(attempt * 100, 1000),
};
