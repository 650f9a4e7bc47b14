import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import {
  RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import { RedisConnection } from '../cluster/redis-connection.js';
import type { Environment } from '../config/environment.js';
import { TooManyAttemptsException } from './oauth.exceptions.js';

const WINDOW_SECONDS = 60;
// Keys are partly caller-chosen (any client id or username can be tried).
const MAX_KEY_PART = 256;

/**
 * Failures counted under one or more limits at once (a username from one address, and the same
 * username from everywhere). `refuseIfExhausted` before the work, `record` after a failure.
 */
export class FailureCount {
  constructor(private readonly counters: { limiter: RateLimiterAbstract; key: string }[]) {}

  /**
   * 429 when any limit is already used up: the attempt is not even looked at. Read as a penalty
   * of 0 points: on Redis one script call, where `get()` is MULTI/GET/PTTL/EXEC through an
   * ioredis pipeline, which cost token issuance 18 % against in-process counting (docs/benchmarks.md).
   * It starts the key's minute if none was running.
   */
  async refuseIfExhausted(): Promise<void> {
    const states = await Promise.all(this.counters.map((c) => c.limiter.penalty(c.key, 0)));
    states.forEach((state, i) => {
      if (state.consumedPoints >= this.counters[i].limiter.points) {
        throw new TooManyAttemptsException(retryAfterSeconds(state));
      }
    });
  }

  /**
   * Counts one failure (an atomic increment, so a concurrent burst cannot slip past between a
   * read and a write); 429 when this one went past a limit, so that no more than the limit's
   * worth of attempts ever get a verdict.
   */
  async record(): Promise<void> {
    const outcomes = await Promise.allSettled(this.counters.map((c) => c.limiter.consume(c.key)));
    for (const outcome of outcomes) {
      if (outcome.status === 'fulfilled') continue;
      if (outcome.reason instanceof RateLimiterRes) {
        throw new TooManyAttemptsException(retryAfterSeconds(outcome.reason));
      }
      throw outcome.reason;
    }
  }
}

/**
 * CONTRACT §3's limits on the /oauth endpoints, on rate-limiter-flexible: in this process's
 * memory, or in Redis (shared by every instance) when REDIS_URL is set. While Redis is away each
 * limiter falls back to an in-memory one of its own (the library's insurance limiter), so the
 * token endpoint keeps answering with per-instance limits, and goes back to Redis when it returns.
 */
@Injectable()
export class ThrottlingService {
  private readonly logger = new Logger(ThrottlingService.name);
  private readonly requests: RateLimiterAbstract;
  private readonly clientFailures: RateLimiterAbstract;
  private readonly passwordFailures: RateLimiterAbstract;
  private readonly usernameFailures: RateLimiterAbstract;

  constructor(config: ConfigService<Environment, true>, redis: RedisConnection) {
    const limiter = (name: string, points: number): RateLimiterAbstract => {
      const options = { keyPrefix: `throttle:${name}`, points, duration: WINDOW_SECONDS };
      if (!redis.client) return new RateLimiterMemory(options);
      return new RateLimiterRedis({
        ...options,
        storeClient: redis.client,
        // Not connected: straight to the insurance limiter rather than a failing command.
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory(options),
      });
    };
    this.requests = limiter('address', config.get('THROTTLE_TOKEN_PER_IP', { infer: true }));
    this.clientFailures = limiter(
      'client-failures',
      config.get('THROTTLE_TOKEN_FAILURES_PER_CLIENT', { infer: true }),
    );
    this.passwordFailures = limiter(
      'password-failures',
      config.get('THROTTLE_TOKEN_FAILURES_PER_USER', { infer: true }),
    );
    this.usernameFailures = limiter(
      'username-failures',
      config.get('THROTTLE_TOKEN_FAILURES_PER_USER_ALL_ADDRESSES', { infer: true }),
    );
  }

  /** Every request to an /oauth endpoint counts against its address, per endpoint. */
  async countRequest(endpoint: string, address: string | undefined): Promise<void> {
    try {
      await this.requests.consume(key(endpoint, address));
    } catch (error) {
      if (error instanceof RateLimiterRes) {
        throw new TooManyAttemptsException(retryAfterSeconds(error));
      }
      throw error;
    }
  }

  /**
   * Failed client authentications, per client id and address: a client id is public (it is in
   * every token), so failures from one address never lock the client out elsewhere.
   */
  clientFailuresFrom(clientId: string, address: string | undefined): FailureCount {
    return new FailureCount([{ limiter: this.clientFailures, key: key(clientId, address) }]);
  }

  /** Failed passwords, per username and address, and per username from all addresses. */
  passwordFailuresFrom(username: string, address: string | undefined): FailureCount {
    return new FailureCount([
      { limiter: this.passwordFailures, key: key(username, address) },
      { limiter: this.usernameFailures, key: key(username) },
    ]);
  }
}

// JSON keeps the parts apart whatever characters they hold. A request whose client has gone has
// no address any more (Node forgets a closed socket's): it still counts, under none.
const key = (...parts: (string | undefined)[]) =>
  JSON.stringify(parts.map((p) => (p ?? '').slice(0, MAX_KEY_PART)));

const retryAfterSeconds = (state: RateLimiterRes) =>
  Math.max(1, Math.ceil(state.msBeforeNext / 1000));
