import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { map, type Observable } from 'rxjs';
import { Page } from '../../pagination/page.js';
import { RAW_RESPONSE } from '../decorators/raw-response.decorator.js';
import { RouteMetadataCache } from '../route-metadata.js';

/**
 * The one place that shapes success bodies: a Page becomes `{data: [...], meta: {...}}`, anything
 * else `{data: ...}` (the success bodies of docs/contract.md §5–§7). Routes marked
 * @RawResponse() pass as they are; errors never get here (the exception filter shapes them).
 * Registered once, by PaginationModule.
 */
@Injectable()
export class DataEnvelopeInterceptor implements NestInterceptor {
  private readonly raw: RouteMetadataCache<boolean>;

  constructor(reflector: Reflector) {
    this.raw = new RouteMetadataCache(reflector, RAW_RESPONSE, false);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return this.raw.get(context) ? next.handle() : next.handle().pipe(ENVELOPE);
  }
}

/** One operator for every request: map() with a module-level function holds no request state. */
const ENVELOPE = map((result: unknown) =>
  result instanceof Page ? result.toBody() : { data: result },
);
