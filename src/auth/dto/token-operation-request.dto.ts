import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { OptionalParameter, RequiredParameter } from '../oauth-request.js';

/**
 * Body of POST /oauth/revoke (RFC 7009) and POST /oauth/introspect (RFC 7662), JSON or form,
 * validated by OAuthParamsPipe.
 */
export class TokenOperationRequestDto {
  @ApiProperty({ description: 'The access token.' })
  @RequiredParameter()
  token: string;

  @ApiPropertyOptional({
    description: 'Accepted and ignored: access tokens are the only kind.',
    example: 'access_token',
  })
  @OptionalParameter()
  token_type_hint?: string;

  @ApiPropertyOptional({ description: 'When the client does not authenticate with HTTP Basic.' })
  @OptionalParameter()
  client_id?: string;

  @ApiPropertyOptional({ description: 'When the client does not authenticate with HTTP Basic.' })
  @OptionalParameter()
  client_secret?: string;
}
