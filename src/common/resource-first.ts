import type { CanActivate, Type } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { routeConfigOf, withRouteConfig } from './route-metadata.js';

/** Fastify route config entry set by @ResourceBeforeBody(). */
export const RESOURCE_FIRST = 'resourceFirst';

/**
 * Fastify route config entry: the guards (providers) that decide before the route's body does,
 * in order, also when Fastify refused the body before the route ran, or before a large body
 * waits for memory (added by guardBeforeBody(), run by BeforeBodyChecks).
 */
export const GUARD_BEFORE_BODY = 'guardBeforeBody';

/**
 * A method decorator adding `guard` to the route's guards before the body: at the front (the
 * bearer guard, on which the others may rely: the token's client) or after those already there.
 */
export function guardBeforeBody(
  guard: Type<CanActivate>,
  where: 'first' | 'last' = 'last',
): MethodDecorator {
  return (target, key, descriptor) => {
    const config = routeConfigOf(descriptor.value as object);
    const guards = (config?.[GUARD_BEFORE_BODY] ?? []) as Type<CanActivate>[];
    const merged = where === 'first' ? [guard, ...guards] : [...guards, guard];
    return withRouteConfig({ [GUARD_BEFORE_BODY]: merged })(target, key, descriptor);
  };
}

/** Looks up a route's resource from the request's path; throws its 404 when there is none. */
export interface ResourceLookup {
  assertExists(request: FastifyRequest): Promise<void>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    [RESOURCE_FIRST]?: Type<ResourceLookup>;
    [GUARD_BEFORE_BODY]?: Type<CanActivate>[];
  }
}

/**
 * CONTRACT §2 answers an unknown resource (404) before a bad body: one Fastify refuses before the
 * route runs (malformed, over 1 MiB, a content type it does not read) or one the route finds
 * invalid (422). The exception filter tells such a refusal only once `lookup` (a provider) finds
 * the resource (BeforeBodyChecks), so only refused and large bodies pay for the lookup.
 */
export const ResourceBeforeBody = (lookup: Type<ResourceLookup>) =>
  withRouteConfig({ [RESOURCE_FIRST]: lookup });
