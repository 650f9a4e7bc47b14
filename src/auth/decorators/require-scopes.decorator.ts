import { applyDecorators, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiForbiddenResponse,
  ApiOAuth2,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ErrorDto } from '../../common/openapi/error.dto.js';
import { guardBeforeBody } from '../../common/resource-first.js';
import { withRouteConfig } from '../../common/route-metadata.js';
import { BEARER_SCOPES, BearerAuthGuard } from '../guards/bearer-auth.guard.js';
import type { Scope } from '../scopes.js';

/**
 * The one decorator a protected route needs: passport's bearer guard (401), the scope check
 * (403) and the OpenAPI security entry, together. The scopes go into the route's Fastify config,
 * where the header check before the body (BearerHeaderCheck) and BeforeBodyChecks (the guard
 * before a refused body, or before a large one waits for memory) find them too.
 */
export function RequireScopes(...scopes: Scope[]) {
  return applyDecorators(
    withRouteConfig({ [BEARER_SCOPES]: scopes }),
    guardBeforeBody(BearerAuthGuard, 'first'),
    UseGuards(BearerAuthGuard),
    // Either scheme: any bearer token, or (for tools that fetch one) OAuth 2.0 with these scopes.
    ApiBearerAuth('bearer'),
    ApiOAuth2(scopes, 'oauth2'),
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
