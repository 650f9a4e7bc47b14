import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { GRANT_TYPES } from '../grant-types.js';
import {
  OAuthParameters,
  OptionalParameter,
  RequiredParameter,
} from '../../common/pipes/oauth-parameters.js';

/**
 * The body of POST /oauth/token (JSON or form), validated by the global pipe with RFC 6749's rules
 * (@OAuthParameters(): unknown parameters ignored, errors as invalid_request). The grant type
 * itself is checked by TokenGrantService: an unknown one is unsupported_grant_type, not
 * invalid_request.
 */
@OAuthParameters()
export class TokenRequestDto {
  @ApiProperty({ enum: GRANT_TYPES, example: 'client_credentials' })
  @RequiredParameter()
  grant_type: string;

  @ApiPropertyOptional({
    description: 'Client id, when the client does not authenticate with HTTP Basic.',
    example: '0b7c0a3e-3f5e-4a59-9d3c-2f1f0f6f3c1a',
  })
  @OptionalParameter()
  client_id?: string;

  @ApiPropertyOptional({
    description: 'Client secret, when the client does not authenticate with HTTP Basic.',
  })
  @OptionalParameter()
  client_secret?: string;

  @ApiProperty({
    description: 'Space-separated scopes, each one the client may request.',
    example: 'customers:read webhooks:write',
  })
  // Only for a grant this server supports: any other is unsupported_grant_type, scope or not.
  @RequiredParameter(isSupportedGrant)
  scope: string;

  @ApiPropertyOptional({ description: 'password grant only (required there).' })
  @RequiredParameter(isPasswordGrant)
  username?: string;

  @ApiPropertyOptional({ description: 'password grant only (required there).', format: 'password' })
  @RequiredParameter(isPasswordGrant)
  password?: string;
}

function isPasswordGrant(params: TokenRequestDto): boolean {
  return params.grant_type === 'password';
}

function isSupportedGrant(params: TokenRequestDto): boolean {
  return (GRANT_TYPES as readonly string[]).includes(params.grant_type);
}
