import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { OAuthParameters, OptionalParameter } from '../../common/pipes/oauth-parameters.js';

/**
 * Body of POST /oauth/revoke (RFC 7009) and POST /oauth/introspect (RFC 7662), JSON or form,
 * validated by the global pipe with RFC 6749's rules (@OAuthParameters()).
 */
@OAuthParameters()
export class TokenOperationRequestDto {
  // Required, but checked after client authentication (RFC 7009 §2.1: the client is
  // authenticated first), so that a bad client is 401 invalid_client whatever it sends.
  @ApiProperty({ description: 'The access token.' })
  @OptionalParameter()
  token?: string;

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
