import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { FastifyRequest } from 'fastify';
import type { Environment } from '../../config/environment.js';
import { FixedWindowLimiter } from '../fixed-window-limiter.js';
import { TooManyAttemptsException } from '../oauth.exceptions.js';

/**
 * THROTTLE_TOKEN_PER_IP: requests a minute from one address, counted per route (so a resource
 * server's introspection calls do not use up its token requests). The address is Fastify's
 * `request.ip`, which honours X-Forwarded-For only when TRUST_PROXY is set.
 */
@Injectable()
export class AddressThrottleGuard implements CanActivate {
  private readonly limiter: FixedWindowLimiter;

  constructor(config: ConfigService<Environment, true>) {
    this.limiter = new FixedWindowLimiter(config.get('THROTTLE_TOKEN_PER_IP', { infer: true }));
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const key = `${context.getHandler().name} ${request.ip}`;
    const retryAfter = this.limiter.retryAfter(key);
    if (retryAfter > 0) throw new TooManyAttemptsException(retryAfter);
    this.limiter.record(key);
    return true;
  }
}
