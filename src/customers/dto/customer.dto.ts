import { ApiProperty } from '@nestjs/swagger';
import type { Customer } from '../customer.entity.js';
import { CompanyDto } from './company.dto.js';

export class CustomerDto {
  @ApiProperty({ type: 'integer', example: 1 })
  id: number;

  @ApiProperty({ type: () => CompanyDto })
  company: CompanyDto;

  static from(customer: Customer): CustomerDto {
    return { id: customer.id, company: CompanyDto.from(customer) };
  }
}
