import { Body, Controller, Get, Put } from '@nestjs/common';
import { ApiOperation, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { RequireScopes } from '../auth/decorators/require-scopes.decorator.js';
import { ResourceBeforeBody } from '../common/resource-first.js';
import { ApiDataResponse, ValidationErrorDto } from '../common/openapi/api-response.decorators.js';
import { ApiCustomerId, CustomerId, CustomerOfPath } from './customer-id.decorator.js';
import { CustomersService } from './customers.service.js';
import { CompanyDto } from './dto/company.dto.js';
import { UpdateCompanyDto } from './dto/update-company.dto.js';

@ApiTags('customers')
@Controller('v2/customers/:customer_id/company')
export class CustomerCompanyController {
  constructor(private readonly customers: CustomersService) {}

  @Get()
  @RequireScopes('customers:read')
  // A refused query (a `__proto__` key) of an unknown customer is 404 first, as for a body.
  @ResourceBeforeBody(CustomerOfPath)
  @ApiOperation({ summary: "A customer's company details (both null for a retail customer)." })
  @ApiCustomerId()
  @ApiDataResponse(CompanyDto)
  async show(@CustomerId() id: number): Promise<CompanyDto> {
    return CompanyDto.from(await this.customers.find(id));
  }

  @Put()
  @RequireScopes('customers:write')
  @ResourceBeforeBody(CustomerOfPath)
  @ApiOperation({
    summary: "Change a customer's company details: only the fields sent change.",
  })
  @ApiCustomerId()
  @ApiDataResponse(CompanyDto)
  @ApiUnprocessableEntityResponse({ type: ValidationErrorDto })
  async update(
    @CustomerId() id: number,
    // An invalid body of an unknown customer is 404 first (@ResourceBeforeBody()).
    @Body() changes: UpdateCompanyDto,
  ): Promise<CompanyDto> {
    // A valid body needs no separate existence check: the UPDATE finds no row (404) by itself.
    return CompanyDto.from(await this.customers.updateCompany(id, changes));
  }
}
