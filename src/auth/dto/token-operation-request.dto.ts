import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** Body of POST /oauth/revoke (RFC 7009) and POST /oauth/introspect (RFC 7662), JSON or form. */
export class TokenOperationRequestDto {
  @ApiProperty({ description: 'The access token.' })
  token: string;

  @ApiPropertyOptional({
    description: 'Accepted and ignored: access tokens are the only kind.',
    example: 'access_token',
  })
  token_type_hint?: string;

  @ApiPropertyOptional({ description: 'When the client does not authenticate with HTTP Basic.' })
  client_id?: string;

  @ApiPropertyOptional({ description: 'When the client does not authenticate with HTTP Basic.' })
  client_secret?: string;
}
