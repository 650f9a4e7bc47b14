import { ApiProperty } from '@nestjs/swagger';
import { COMPANY_TYPES, type CompanyType } from '../company-type.js';
import type { Customer } from '../customer.entity.js';

/** The customer company resource (docs/contract.md §5): both null for a retail customer. */
export class CompanyDto {
  @ApiProperty({
    type: 'string',
    nullable: true,
    example: 'Acme Ltd',
    description: 'Company name; null for a retail customer.',
  })
  name: string | null;

  @ApiProperty({
    // null listed too: in OpenAPI 3.0 `nullable` does not extend an enum (3.0.3 clarification).
    enum: [...COMPANY_TYPES, null],
    type: 'string',
    nullable: true,
    example: 'limited-company',
    description: 'Company type; null for a retail customer.',
  })
  type: CompanyType | null;

  static from(customer: Customer): CompanyDto {
    return { name: customer.companyName, type: customer.companyType };
  }
}
