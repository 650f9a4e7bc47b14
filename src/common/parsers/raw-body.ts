import type { RawBodyRequest } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { withRouteConfig } from '../route-metadata.js';

/** Fastify route config entry set by @KeepRawBody(). */
export const RAW_BODY_ROUTE = 'keepRawBody';

declare module 'fastify' {
  interface FastifyContextConfig {
    [RAW_BODY_ROUTE]?: true;
  }
}

/**
 * Keeps a JSON body's bytes, exactly as received, as `request.rawBody` beside the parsed value
 * (what a signature is computed over). Only on the routes that need them.
 */
export const KeepRawBody = () => withRouteConfig({ [RAW_BODY_ROUTE]: true });

/** Called by the JSON parser with the bytes it read. */
export function keepRawBody(request: FastifyRequest, bytes: Buffer): void {
  if (request.routeOptions.config?.[RAW_BODY_ROUTE]) {
    (request as RawBodyRequest<FastifyRequest>).rawBody = bytes;
  }
}
