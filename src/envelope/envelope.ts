import { Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Page, pageMeta } from '../pagination/page.js';

/** Fastify route config flag set by @RawResponse(). */
const RAW_RESPONSE = 'rawResponse';

declare module 'fastify' {
  interface FastifyContextConfig {
    [RAW_RESPONSE]?: boolean;
  }
}

/**
 * Leaves the results of a controller's routes (on a class) or of one route (on a method) as they
 * are: no `{data}` envelope (OAuth, health, well-known documents).
 */
export function RawResponse(): ClassDecorator & MethodDecorator {
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const mark = RouteConfig({ [RAW_RESPONSE]: true });
    if (descriptor) return void mark(target, key!, descriptor);
    // On a class: each of its own methods (class decorators run after method decorators).
    const prototype = (target as { prototype: object }).prototype;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const method = Object.getOwnPropertyDescriptor(prototype, name)!;
      if (name !== 'constructor' && typeof method.value === 'function') {
        mark(prototype, name, method);
      }
    }
  };
}

/**
 * The one place that shapes success bodies: a Page becomes `{data: [...], meta: {...}}`, anything
 * else `{data: ...}` (docs/contract.md §7, SPEC "an object with a data attribute").
 *
 * A Fastify `preSerialization` hook rather than a Nest interceptor: with any interceptor, Nest
 * runs each request through rxjs (deferred observables, a replay subject, a client-disconnect
 * watcher), which cost about 40 % of a simple authenticated read's CPU time (docs/benchmarks.md).
 * The hook sees every object a route sends: error bodies (status ≥ 400, shaped by the exception
 * filter) and routes marked @RawResponse() pass as they are. Strings, buffers and streams (the
 * OpenAPI document, the docs UI) never reach a preSerialization hook.
 */
@Injectable()
export class Envelope implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit() {
    // A CLI application context has no HTTP server.
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    fastify?.addHook('preSerialization', envelope);
  }
}

function envelope(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
) {
  const enveloped = reply.statusCode < 400 && !request.routeOptions.config[RAW_RESPONSE];
  done(null, enveloped ? wrap(payload) : payload);
}

function wrap(result: unknown) {
  if (result instanceof Page) {
    const { page, limit } = result.request;
    return { data: result.items, meta: pageMeta(result.total, page, limit, result.items.length) };
  }
  return { data: result };
}
