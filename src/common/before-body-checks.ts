import { type CanActivate, ForbiddenException, Injectable, type Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isObservable, lastValueFrom } from 'rxjs';
import { GUARD_BEFORE_BODY, RESOURCE_FIRST, type ResourceLookup } from './resource-first.js';

/**
 * What a route decides before its body (CONTRACT §2): its guards (token 401, scope 403, set by
 * @RequireScopes(); then a webhook signature's headers, by @VerifyWebhookSignature()), then its
 * resource (404, set by @ResourceBeforeBody()). Nest runs both in its
 * pipeline after the body is parsed; they are run here, ahead of it, where the body would
 * otherwise answer first: a body Fastify refused (the exception filter), and a large body about
 * to wait for room in the memory budget (bootstrap), which must not keep a bad token waiting, and
 * a body announced with Expect: 100-continue, which is invited only once they pass (bootstrap).
 */
@Injectable()
export class BeforeBodyChecks {
  /** Requests whose checks passed (assertPassed()). */
  private readonly passed = new WeakSet<FastifyRequest>();

  constructor(private readonly moduleRef: ModuleRef) {}

  /** Whether the request's route has anything to decide before its body. */
  apply(request: FastifyRequest): boolean {
    const config = request.routeOptions.config;
    return (config?.[GUARD_BEFORE_BODY]?.length ?? 0) > 0 || config?.[RESOURCE_FIRST] !== undefined;
  }

  /**
   * Resolves when the route's guard and resource lookup pass (at once where it has none);
   * rejects with their refusal. Run once a request: a body announced with Expect: 100-continue
   * may be large or refused later.
   */
  async assertPassed(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (this.passed.has(request) || !this.apply(request)) return;
    const config = request.routeOptions.config;
    const guards = config?.[GUARD_BEFORE_BODY] ?? [];
    if (guards.length > 0) {
      const context = new ExecutionContextHost([request, reply]);
      context.setType('http');
      for (const guard of guards) {
        const result = this.get(guard).canActivate(context);
        if (!(isObservable(result) ? await lastValueFrom(result) : await result)) {
          throw new ForbiddenException();
        }
      }
    }
    const lookup = config?.[RESOURCE_FIRST];
    if (lookup) await this.get(lookup).assertExists(request);
    this.passed.add(request);
  }

  private get<T extends CanActivate | ResourceLookup>(type: Type<T>): T {
    return this.moduleRef.get(type, { strict: false });
  }
}
