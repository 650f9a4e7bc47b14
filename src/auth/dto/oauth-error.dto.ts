import { ApiProperty } from '@nestjs/swagger';

/** RFC 6749 §5.2 error body of the /oauth endpoints. */
export class OAuthErrorDto {
  @ApiProperty({
    enum: [
      'invalid_request',
      'invalid_client',
      'invalid_grant',
      'unauthorized_client',
      'unsupported_grant_type',
      'invalid_scope',
      'server_error',
      'temporarily_unavailable',
    ],
  })
  error: string;

  @ApiProperty({ example: 'Client authentication failed.' })
  error_description: string;
}

export class TooManyRequestsDto {
  @ApiProperty({ example: 'Too many requests.' })
  message: string;
}
