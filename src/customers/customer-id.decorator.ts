import {
  applyDecorators,
  createParamDecorator,
  ExecutionContext,
  Injectable,
} from '@nestjs/common';
import { ApiNotFoundResponse, ApiParam } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import type { ResourceLookup } from '../common/resource-first.js';
import { CustomerNotFoundException } from './customer-not-found.exception.js';
import { CustomersService } from './customers.service.js';

const CANONICAL_ID = /^[1-9][0-9]*$/;

/**
 * The largest id a customer can have: the id column is a 32-bit integer on PostgreSQL, which
 * would refuse a bigger parameter with an error instead of finding no row.
 */
export const MAX_CUSTOMER_ID = 2_147_483_647;

/**
 * Only canonical decimal ids name a customer (docs/contract.md §5): anything else (`abc`, `0`, `-1`,
 * `1.5`, `01`, `1e3`, a huge number) is the same 404 as an id no customer has, not a 422.
 */
export function parseCustomerId(value: unknown): number {
  const id = typeof value === 'string' && CANONICAL_ID.test(value) ? Number(value) : NaN;
  if (!(id <= MAX_CUSTOMER_ID)) throw new CustomerNotFoundException();
  return id;
}

/**
 * The `customer_id` path parameter as a number. A param decorator rather than
 * `@Param('customer_id', pipe)`: the global ValidationPipe would first turn `01` or `1e3` into
 * a number (its primitive transform for a `number` parameter), hiding that it is not canonical.
 */
export const CustomerId = createParamDecorator((_: unknown, ctx: ExecutionContext): number =>
  parseCustomerId(
    ctx.switchToHttp().getRequest<{ params: Record<string, unknown> }>().params.customer_id,
  ),
);

/** The customer of the `customer_id` path parameter, for @ResourceBeforeBody(). */
@Injectable()
export class CustomerOfPath implements ResourceLookup {
  constructor(private readonly customers: CustomersService) {}

  async assertExists(request: FastifyRequest): Promise<void> {
    const { customer_id } = request.params as Record<string, unknown>;
    await this.customers.find(parseCustomerId(customer_id));
  }
}

/** OpenAPI for the `customer_id` path parameter and its 404. */
export const ApiCustomerId = () =>
  applyDecorators(
    ApiParam({
      name: 'customer_id',
      schema: { type: 'integer', minimum: 1, maximum: MAX_CUSTOMER_ID },
      description: 'Customer id: a canonical decimal integer; anything else is 404.',
    }),
    ApiNotFoundResponse({
      description: 'No such customer.',
      schema: {
        type: 'object',
        required: ['message'],
        properties: { message: { type: 'string' } },
        example: { message: 'Customer not found.' },
      },
    }),
  );
