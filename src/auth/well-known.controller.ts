import { Controller, Get, Header } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Environment } from '../config/environment.js';
import { RawResponse } from '../common/decorators/raw-response.decorator.js';
import { JwksDto, ServerMetadataDto } from './dto/well-known.dto.js';
import { GRANT_TYPES } from './grant-types.js';
import { SCOPES } from './scopes.js';
import { SigningKeysService } from './signing-keys.service.js';

const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'];

@ApiTags('oauth')
@RawResponse()
@Controller('.well-known')
export class WellKnownController {
  constructor(
    private readonly keys: SigningKeysService,
    private readonly config: ConfigService<Environment, true>,
  ) {}

  @Get('jwks.json')
  @Header('Cache-Control', 'public, max-age=300')
  @ApiOperation({ summary: 'Public keys that verify access tokens (RFC 7517).', security: [] })
  @ApiOkResponse({ type: JwksDto })
  jwks(): JwksDto {
    return this.keys.jwks() as JwksDto;
  }

  @Get('oauth-authorization-server')
  @Header('Cache-Control', 'public, max-age=300')
  @ApiOperation({ summary: 'Authorization server metadata (RFC 8414).', security: [] })
  @ApiOkResponse({ type: ServerMetadataDto })
  metadata(): ServerMetadataDto {
    const issuer = this.config.get('TOKEN_ISSUER', { infer: true });
    const base = issuer.replace(/\/+$/, '');
    return {
      issuer,
      token_endpoint: `${base}/oauth/token`,
      jwks_uri: `${base}/.well-known/jwks.json`,
      revocation_endpoint: `${base}/oauth/revoke`,
      introspection_endpoint: `${base}/oauth/introspect`,
      scopes_supported: [...SCOPES],
      response_types_supported: [],
      grant_types_supported: [...GRANT_TYPES],
      token_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
      revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
      introspection_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    };
  }
}
