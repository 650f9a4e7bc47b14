import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { GRANT_TYPES } from '../grant-types.js';

/**
 * Documents the body of POST /oauth/token (JSON or form). Not validated by the global pipe:
 * RFC 6749 wants unknown parameters ignored and its own errors (oauth-request.ts).
 */
export class TokenRequestDto {
  @ApiProperty({ enum: GRANT_TYPES, example: 'client_credentials' })
  grant_type: string;

  @ApiPropertyOptional({
    description: 'Client id, when the client does not authenticate with HTTP Basic.',
    example: '0b7c0a3e-3f5e-4a59-9d3c-2f1f0f6f3c1a',
  })
  client_id?: string;

  @ApiPropertyOptional({
    description: 'Client secret, when the client does not authenticate with HTTP Basic.',
  })
  client_secret?: string;

  @ApiProperty({
    description: 'Space-separated scopes, each one the client may request.',
    example: 'customers:read webhooks:write',
  })
  scope: string;

  @ApiPropertyOptional({ description: 'password grant only.' })
  username?: string;

  @ApiPropertyOptional({ description: 'password grant only.', format: 'password' })
  password?: string;
}
