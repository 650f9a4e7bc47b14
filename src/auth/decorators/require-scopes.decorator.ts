import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorDto } from '../../common/openapi/error.dto.js';
import { BearerAuthGuard, REQUIRED_SCOPES } from '../guards/bearer-auth.guard.js';
import type { Scope } from '../scopes.js';

/**
 * The one decorator a protected route needs: bearer-token check (401), scope check (403) and
 * the OpenAPI security entry, together.
 */
export function RequireScopes(...scopes: Scope[]) {
  return applyDecorators(
    SetMetadata(REQUIRED_SCOPES, scopes),
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
