import {
  applyDecorators,
  CanActivate,
  ExecutionContext,
  Injectable,
  UseGuards,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { guardBeforeBody } from '../../common/resource-first.js';
import { ThrottlingService } from '../throttling.service.js';

/**
 * THROTTLE_TOKEN_PER_IP: requests a minute from one address, counted per route (so a resource
 * server's introspection calls do not use up its token requests). The address is Fastify's
 * `request.ip`, which honours X-Forwarded-For only from the proxies TRUST_PROXY names.
 */
@Injectable()
export class AddressThrottleGuard implements CanActivate {
  /** Requests already counted: the guard also runs before a refused or large body (below). */
  private readonly counted = new WeakSet<FastifyRequest>();

  constructor(private readonly throttling: ThrottlingService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (this.counted.has(request)) return true;
    this.counted.add(request);
    await this.throttling.countRequest(request.routeOptions.url ?? request.url, request.ip);
    return true;
  }
}

/**
 * Counts every request to the route against its address: before its body is read when the body
 * is refused (over 16 KiB, malformed), so that it does not escape the count.
 */
export const ThrottledByAddress = () =>
  applyDecorators(guardBeforeBody(AddressThrottleGuard, 'first'), UseGuards(AddressThrottleGuard));
