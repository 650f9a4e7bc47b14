import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { BearerAuthGuard } from '../guards/bearer-auth.guard.js';
import { ScopesGuard } from '../guards/scopes.guard.js';
import type { Scope } from '../scopes.js';

export const REQUIRED_SCOPES = Symbol('required-scopes');

/**
 * The one decorator a protected route needs: bearer-token check (401), scope check (403) and
 * the OpenAPI security entry, together.
 */
export function RequireScopes(...scopes: Scope[]) {
  return applyDecorators(
    SetMetadata(REQUIRED_SCOPES, scopes),
    UseGuards(BearerAuthGuard, ScopesGuard),
    ApiBearerAuth('bearer'),
    ApiUnauthorizedResponse({ description: 'Missing, invalid, expired or revoked token.' }),
    ApiForbiddenResponse({ description: `The token lacks the scope: ${scopes.join(' ')}.` }),
  );
}
