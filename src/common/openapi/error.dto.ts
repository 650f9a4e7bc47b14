import { ApiProperty } from '@nestjs/swagger';

/** Every error body but the 422's and the OAuth endpoints' (docs/contract.md §2). */
export class ErrorDto {
  @ApiProperty({ example: 'Customer not found.' })
  message: string;
}
