import { applyDecorators } from '@nestjs/common';
import { ApiHideProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsOptional, ValidateBy } from 'class-validator';
import { NestedObject } from '../common/decorators/nested-object.decorator.js';

export const DEFAULT_PAGE_SIZE = 15;
export const MAX_PAGE_SIZE = 100;

/**
 * Query strings carry text; only decimal integers become numbers, anything else fails. Digits
 * beyond what a number holds exactly stay text, and fail as too large.
 */
const toInteger = ({ value }: { value: unknown }) => {
  const digits = typeof value === 'string' ? /^0*(\d{1,16})$/.exec(value)?.[1] : undefined;
  return digits === undefined ? value : Number(digits);
};

/**
 * One message for anything but an integer from min to max (IsInt + Min + Max would give three),
 * and `tooLarge` for an integer past max (digits included).
 */
function IntegerBetween(min: number, max: number, message: string, tooLarge = message) {
  return ValidateBy({
    name: 'integerBetween',
    validator: {
      validate: (value) => Number.isInteger(value) && value >= min && value <= max,
      defaultMessage: (args) => {
        const value = args?.value;
        const large = (typeof value === 'string' && /^\d+$/.test(value)) || value > max;
        return large ? tooLarge : message;
      },
    },
  });
}

/**
 * An integer query parameter from min to max, with one message for anything else (query strings
 * carry text: decimal digits, leading zeros allowed, become a number). For a list's integer
 * filters as for `page` and `limit`.
 */
export function QueryInteger(min: number, max: number, message: string, tooLarge = message) {
  return applyDecorators(Transform(toInteger), IntegerBetween(min, max, message, tooLarge));
}

const PAGE_MESSAGE = 'The page must be a positive integer.';
const PAGE_TOO_LARGE = `The page must be at most ${Number.MAX_SAFE_INTEGER}.`;
const LIMIT_MESSAGE = `The limit must be between 1 and ${MAX_PAGE_SIZE}.`;

export class PageAttributesDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
    default: 1,
    description: '1-indexed page.',
  })
  @IsOptional()
  @QueryInteger(1, Number.MAX_SAFE_INTEGER, PAGE_MESSAGE, PAGE_TOO_LARGE)
  page?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_PAGE_SIZE,
    default: DEFAULT_PAGE_SIZE,
    description: 'Records per page.',
  })
  @IsOptional()
  @QueryInteger(1, MAX_PAGE_SIZE, LIMIT_MESSAGE)
  limit?: number;
}

export class ResultModeDto {
  @ApiPropertyOptional({ enum: ['paginated'] })
  @IsOptional()
  @IsIn(['paginated'], { message: 'The mode must be paginated.' })
  mode?: 'paginated';

  @ApiPropertyOptional({ type: () => PageAttributesDto })
  @IsOptional()
  @NestedObject(
    () => PageAttributesDto,
    'The attributes must be an object: result_mode[attributes][page]=….',
  )
  attributes?: PageAttributesDto;
}

/** `result_mode[mode]`, `result_mode[attributes][page]`, `result_mode[attributes][limit]` (docs/contract.md §7). */
export class PageQueryDto {
  // Documented as three bracketed parameters by @ApiPaginatedResponse instead.
  @ApiHideProperty()
  @IsOptional()
  @NestedObject(
    () => ResultModeDto,
    'The result_mode must be an object: result_mode[mode]=paginated.',
  )
  result_mode?: ResultModeDto;
}

export interface PageRequest {
  page: number;
  limit: number;
  offset: number;
}

export function toPageRequest(query: PageQueryDto | undefined): PageRequest {
  const page = query?.result_mode?.attributes?.page ?? 1;
  const limit = query?.result_mode?.attributes?.limit ?? DEFAULT_PAGE_SIZE;
  return { page, limit, offset: (page - 1) * limit };
}
