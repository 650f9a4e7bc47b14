import { applyDecorators, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorDto } from '../../common/openapi/error.dto.js';
import { withRouteConfig } from '../../common/route-metadata.js';
import { BEARER_ROUTE } from '../bearer-authentication.js';
import { BearerAuthGuard } from '../guards/bearer-auth.guard.js';
import type { Scope } from '../scopes.js';

/**
 * The one decorator a protected route needs: bearer-token check (401), scope check (403) and
 * the OpenAPI security entry, together. The scopes go into the route's Fastify config, where
 * BearerAuthentication's hook decides both before the body is read.
 */
export function RequireScopes(...scopes: Scope[]) {
  return applyDecorators(
    withRouteConfig({ [BEARER_ROUTE]: scopes }),
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
