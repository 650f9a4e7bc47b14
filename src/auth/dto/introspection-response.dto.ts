import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** RFC 7662 §2.2. An inactive token is `{"active": false}` and nothing else. */
export class IntrospectionResponseDto {
  @ApiProperty()
  active: boolean;

  @ApiPropertyOptional({ example: 'customers:read' })
  scope?: string;

  @ApiPropertyOptional()
  client_id?: string;

  @ApiPropertyOptional({ enum: ['Bearer'] })
  token_type?: 'Bearer';

  @ApiPropertyOptional({ description: 'Epoch seconds.' })
  exp?: number;

  @ApiPropertyOptional({ description: 'Epoch seconds.' })
  iat?: number;

  @ApiPropertyOptional({ description: 'Client id (client_credentials) or user id (password).' })
  sub?: string;

  @ApiPropertyOptional()
  aud?: string;

  @ApiPropertyOptional()
  iss?: string;

  @ApiPropertyOptional()
  jti?: string;
}
