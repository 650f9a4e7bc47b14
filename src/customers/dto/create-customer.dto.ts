import { ApiExtraModels, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { NestedObject } from '../../common/decorators/nested-object.decorator.js';
import { COMPANY_TYPES, type CompanyType } from '../company-type.js';
import { IsCompanyName, IsCompanyType, NAME_MAX_LENGTH } from './company.validators.js';

/** A new customer's company: a field left out is null, as it is for a retail customer. */
export class NewCompanyDto {
  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    minLength: 1,
    maxLength: NAME_MAX_LENGTH,
    example: 'Acme Ltd',
  })
  @IsOptional()
  @IsCompanyName()
  name?: string | null;

  @ApiPropertyOptional({
    // null listed too: in OpenAPI 3.0 `nullable` does not extend an enum (3.0.3 clarification).
    enum: [...COMPANY_TYPES, null],
    type: 'string',
    nullable: true,
    example: 'limited-company',
  })
  @IsOptional()
  @IsCompanyType({ nullable: true })
  type?: CompanyType | null;
}

/** POST /v2/customers: without `company` the customer is a retail one (docs/contract.md §5). */
@ApiExtraModels(NewCompanyDto)
export class CreateCustomerDto {
  // OpenAPI 3.0 ignores `nullable` beside a `$ref` (or an `allOf` of one): null is spelled out.
  @ApiPropertyOptional({
    oneOf: [
      { $ref: getSchemaPath(NewCompanyDto) },
      { type: 'object', nullable: true, enum: [null] },
    ],
    description: 'Left out or null: a retail customer.',
  })
  @IsOptional()
  @NestedObject(() => NewCompanyDto, 'The company must be an object.')
  company?: NewCompanyDto | null;
}
