import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessTokenService } from './access-tokens.service.js';
import { ClientsService } from './clients.service.js';
import { OAuthClient } from './oauth-client.entity.js';
import { OAuthController } from './oauth.controller.js';
import { RevocationService } from './revocation.service.js';
import { RevokedToken } from './revoked-token.entity.js';
import { SigningKey } from './signing-key.entity.js';
import { SigningKeysService } from './signing-keys.service.js';
import { BearerStrategy } from './strategies/bearer.strategy.js';
import { TokenGrantService } from './token-grant.service.js';
import { TokenStateService } from './token-state.service.js';
import { TokenVerifier } from './token-verifier.service.js';
import { User } from './user.entity.js';
import { UsersService } from './users.service.js';
import { WellKnownController } from './well-known.controller.js';

/**
 * OAuth 2.0 token issuance (docs/contract.md §3), bearer tokens, revocation and introspection (§4).
 * Other modules protect routes with @RequireScopes() and read @CurrentPrincipal(); the module
 * is global so that the bearer guard finds the TokenVerifier from any module's routes.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([OAuthClient, User, RevokedToken, SigningKey])],
  controllers: [OAuthController, WellKnownController],
  providers: [
    SigningKeysService,
    AccessTokenService,
    TokenStateService,
    TokenVerifier,
    ClientsService,
    UsersService,
    RevocationService,
    TokenGrantService,
    BearerStrategy,
  ],
  exports: [ClientsService, UsersService, RevocationService, TokenVerifier, AccessTokenService],
})
export class AuthModule {}
