import { ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { COMPANY_TYPES, type CompanyType } from '../company-type.js';
import { IsCompanyName, IsCompanyType, NAME_MAX_LENGTH } from './company.validators.js';

/**
 * PUT /v2/customers/{customer_id}/company: only the fields present change (docs/contract.md §5), so
 * each field is optional, but a body with neither is refused naming both.
 */
export class UpdateCompanyDto {
  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    minLength: 1,
    maxLength: NAME_MAX_LENGTH,
    example: 'Acme Ltd',
    description: 'Company name; null clears it. Omitted: unchanged.',
  })
  // JSON has no `undefined`: undefined means the field was not sent.
  @ValidateIf((body: UpdateCompanyDto) => body.name !== undefined || body.type === undefined)
  @IsCompanyName('The name field is required when type is not present.')
  name?: string | null;

  @ApiPropertyOptional({
    enum: COMPANY_TYPES,
    example: 'limited-company',
    description: 'Company type (not null). Omitted: unchanged.',
  })
  @ValidateIf((body: UpdateCompanyDto) => body.type !== undefined || body.name === undefined)
  @IsCompanyType({
    nullable: false,
    whenMissing: 'The type field is required when name is not present.',
  })
  type?: CompanyType;
}
