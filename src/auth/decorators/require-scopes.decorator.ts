import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorDto } from '../../common/openapi/error.dto.js';
import { BEARER_ROUTE } from '../bearer-authentication.js';
import { BearerAuthGuard, REQUIRED_SCOPES } from '../guards/bearer-auth.guard.js';

/** Where @nestjs/platform-fastify reads a handler's route config (its RouteConfig() key). */
const FASTIFY_ROUTE_CONFIG_METADATA = '__fastify_route_config__';
import type { Scope } from '../scopes.js';

/**
 * Marks the route in its Fastify config, where BearerAuthentication's hook looks before the body
 * is read. Merged into the config other decorators set (RouteConfig() would replace it).
 */
const markBearerRoute: MethodDecorator = (_target, _key, descriptor) => {
  const handler = descriptor.value as object;
  const config = Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as object | undefined;
  Reflect.defineMetadata(
    FASTIFY_ROUTE_CONFIG_METADATA,
    { ...config, [BEARER_ROUTE]: true },
    handler,
  );
};

/**
 * The one decorator a protected route needs: bearer-token check (401), scope check (403) and
 * the OpenAPI security entry, together.
 */
export function RequireScopes(...scopes: Scope[]) {
  return applyDecorators(
    SetMetadata(REQUIRED_SCOPES, scopes),
    markBearerRoute,
    UseGuards(BearerAuthGuard),
    ApiBearerAuth('bearer'),
    ApiUnauthorizedResponse({
      type: ErrorDto,
      description: 'Missing, invalid, expired or revoked token.',
    }),
    ApiForbiddenResponse({
      type: ErrorDto,
      description: `The token lacks the scope: ${scopes.join(' ')}.`,
    }),
  );
}
