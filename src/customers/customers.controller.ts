import { Body, Controller, Get, HttpStatus, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { RequireScopes } from '../auth/decorators/require-scopes.decorator.js';
import { ResourceBeforeBody } from '../common/resource-first.js';
import { ApiDataResponse, ValidationErrorDto } from '../common/openapi/api-response.decorators.js';
import { ApiPaginatedResponse } from '../pagination/api-paginated-response.decorator.js';
import type { Page } from '../pagination/page.js';
import { PageQueryDto, toPageRequest } from '../pagination/page-query.dto.js';
import { ApiCustomerId, CustomerId, CustomerOfPath } from './customer-id.decorator.js';
import { CustomersService } from './customers.service.js';
import { CreateCustomerDto } from './dto/create-customer.dto.js';
import { CustomerDto } from './dto/customer.dto.js';

@ApiTags('customers')
@Controller('v2/customers')
export class CustomersController {
  constructor(private readonly customers: CustomersService) {}

  @Get()
  @RequireScopes('customers:read')
  @ApiOperation({ summary: 'Customers, paged, by id.' })
  @ApiPaginatedResponse(CustomerDto)
  async list(@Query() query: PageQueryDto): Promise<Page<CustomerDto>> {
    const page = await this.customers.list(toPageRequest(query));
    return page.map(CustomerDto.from);
  }

  @Post()
  @RequireScopes('customers:write')
  @ApiOperation({ summary: 'Create a customer; without `company` it is a retail customer.' })
  // No body at all is an empty object: a retail customer (docs/contract.md §2).
  @ApiBody({ type: CreateCustomerDto, required: false })
  @ApiDataResponse(CustomerDto, HttpStatus.CREATED)
  @ApiUnprocessableEntityResponse({ type: ValidationErrorDto })
  async create(@Body() body: CreateCustomerDto): Promise<CustomerDto> {
    const customer = await this.customers.create({
      name: body.company?.name ?? null,
      type: body.company?.type ?? null,
    });
    return CustomerDto.from(customer);
  }

  @Get(':customer_id')
  @RequireScopes('customers:read')
  // A refused query (a `__proto__` key) of an unknown customer is 404 first, as for a body.
  @ResourceBeforeBody(CustomerOfPath)
  @ApiOperation({ summary: 'One customer.' })
  @ApiCustomerId()
  @ApiDataResponse(CustomerDto)
  async show(@CustomerId() id: number): Promise<CustomerDto> {
    return CustomerDto.from(await this.customers.find(id));
  }
}
