import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ThrottlingService } from '../throttling.service.js';

/**
 * THROTTLE_TOKEN_PER_IP: requests a minute from one address, counted per route (so a resource
 * server's introspection calls do not use up its token requests). The address is Fastify's
 * `request.ip`, which honours X-Forwarded-For only from the proxies TRUST_PROXY names.
 */
@Injectable()
export class AddressThrottleGuard implements CanActivate {
  constructor(private readonly throttling: ThrottlingService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    await this.throttling.countRequest(context.getHandler().name, request.ip);
    return true;
  }
}
