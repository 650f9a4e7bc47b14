import type { ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';

/**
 * A route's metadata (`getAllAndOverride` over handler and class), read once per route instead
 * of on every request: decorators do not change after start-up. Keyed by class, then handler,
 * since one inherited handler can serve controllers with different class metadata.
 */
export class RouteMetadataCache<T> {
  private readonly byClass = new WeakMap<object, Map<object, T>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly key: string | symbol,
    private readonly fallback: T,
  ) {}

  get(context: ExecutionContext): T {
    const type = context.getClass();
    const handler = context.getHandler();
    let routes = this.byClass.get(type);
    if (!routes) this.byClass.set(type, (routes = new Map()));
    let value = routes.get(handler);
    if (value === undefined) {
      value = this.reflector.getAllAndOverride<T>(this.key, [handler, type]) ?? this.fallback;
      routes.set(handler, value);
    }
    return value;
  }
}

/** Where @nestjs/platform-fastify reads a handler's route config (its RouteConfig() key). */
const FASTIFY_ROUTE_CONFIG_METADATA = '__fastify_route_config__';

/**
 * A method decorator adding `entries` to the handler's Fastify route config, where Fastify hooks
 * find them before Nest runs; merged into what other decorators set (RouteConfig() replaces it).
 */
export function withRouteConfig(entries: Record<string, unknown>): MethodDecorator {
  return (_target, _key, descriptor) => {
    const handler = descriptor.value as object;
    Reflect.defineMetadata(
      FASTIFY_ROUTE_CONFIG_METADATA,
      { ...routeConfigOf(handler), ...entries },
      handler,
    );
  };
}

/** What decorators applied so far set in the handler's Fastify route config. */
export function routeConfigOf(handler: object): Record<string, unknown> | undefined {
  return Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as
    Record<string, unknown> | undefined;
}
