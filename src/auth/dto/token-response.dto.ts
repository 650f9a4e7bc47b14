import { ApiProperty } from '@nestjs/swagger';

export class TokenResponseDto {
  @ApiProperty({ enum: ['Bearer'], example: 'Bearer' })
  token_type: 'Bearer';

  @ApiProperty({
    description: 'Lifetime of the token in seconds, as a decimal string (docs/contract.md §3).',
    pattern: '^[0-9]+$',
    example: '31536000',
  })
  expires_in: string;

  @ApiProperty({ description: 'JWT (RFC 9068), signed with EdDSA or ES256.' })
  access_token: string;
}
