import {
  CallHandler,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  SetMetadata,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { map, Observable } from 'rxjs';
import { RouteMetadataCache } from '../common/route-metadata.js';
import { Page, pageMeta } from './page.js';

const RAW_RESPONSE = Symbol('raw-response');

/** Leaves a route's (or controller's) result as it is: no `{data}` envelope (OAuth, health). */
export const RawResponse = () => SetMetadata(RAW_RESPONSE, true);

/**
 * The one place that shapes success bodies: a Page becomes `{data: [...], meta: {...}}`, anything
 * else `{data: ...}` (CONTRACT §7, SPEC "an object with a data attribute").
 */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  private readonly raw: RouteMetadataCache<boolean>;

  constructor(reflector: Reflector) {
    this.raw = new RouteMetadataCache(reflector, RAW_RESPONSE, false);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const raw = this.raw.get(context);
    if (raw || context.getType() !== 'http') return next.handle();
    return next.handle().pipe(map(wrap));
  }
}

export function wrap(result: unknown) {
  if (result instanceof Page) {
    const { page, limit } = result.request;
    return { data: result.items, meta: pageMeta(result.total, page, limit, result.items.length) };
  }
  return { data: result };
}
