import { Global, Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessTokenService } from './access-tokens.service.js';
import { BearerHeaderCheck } from './bearer-header-check.js';
import { ClientsService } from './clients.service.js';
import { BearerAuthGuard } from './guards/bearer-auth.guard.js';
import { ClientSecretHasher } from './secret-hash.js';
import { OAuthClient } from './oauth-client.entity.js';
import { OAuthClientsRepository } from './oauth-clients.repository.js';
import { OAuthController } from './oauth.controller.js';
import { RevocationService } from './revocation.service.js';
import { RevokedToken } from './revoked-token.entity.js';
import { RevokedTokensRepository } from './revoked-tokens.repository.js';
import { SigningKey } from './signing-key.entity.js';
import { SigningKeysRepository } from './signing-keys.repository.js';
import { SigningKeysService } from './signing-keys.service.js';
import { BearerStrategy } from './strategies/bearer.strategy.js';
import { ThrottlingService } from './throttling.service.js';
import { TokenGrantService } from './token-grant.service.js';
import { TokenStateService } from './token-state.service.js';
import { TokenVerifier } from './token-verifier.service.js';
import { User } from './user.entity.js';
import { UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';
import { WellKnownController } from './well-known.controller.js';

/**
 * OAuth 2.0 token issuance (docs/contract.md §3), bearer tokens, revocation and introspection (§4).
 * Other modules protect routes with @RequireScopes() (passport's 'bearer' strategy, BearerStrategy,
 * through BearerAuthGuard) and read @CurrentPrincipal(); the module is global so that the guard
 * is found from any module's routes.
 */
@Global()
@Module({
  imports: [
    PassportModule,
    TypeOrmModule.forFeature([OAuthClient, User, RevokedToken, SigningKey]),
  ],
  controllers: [OAuthController, WellKnownController],
  providers: [
    OAuthClientsRepository,
    UsersRepository,
    RevokedTokensRepository,
    SigningKeysRepository,
    SigningKeysService,
    AccessTokenService,
    TokenStateService,
    TokenVerifier,
    ClientSecretHasher,
    ClientsService,
    UsersService,
    RevocationService,
    TokenGrantService,
    ThrottlingService,
    BearerStrategy,
    BearerAuthGuard,
    BearerHeaderCheck,
  ],
  exports: [
    BearerAuthGuard,
    ClientsService,
    UsersService,
    RevocationService,
    TokenVerifier,
    AccessTokenService,
  ],
})
export class AuthModule {}
