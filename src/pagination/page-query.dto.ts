import { ApiHideProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsIn, IsInt, IsObject, IsOptional, Max, Min, ValidateNested } from 'class-validator';

export const DEFAULT_PAGE_SIZE = 15;
export const MAX_PAGE_SIZE = 100;

/** Query strings carry text; only canonical decimal integers become numbers, anything else fails. */
const toInteger = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : value;

const PAGE_MESSAGE = 'The page must be a positive integer.';
const LIMIT_MESSAGE = `The limit must be between 1 and ${MAX_PAGE_SIZE}.`;

export class PageAttributesDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, default: 1, description: '1-indexed page.' })
  @IsOptional()
  @Transform(toInteger)
  @IsInt({ message: PAGE_MESSAGE })
  @Min(1, { message: PAGE_MESSAGE })
  page?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_PAGE_SIZE,
    default: DEFAULT_PAGE_SIZE,
    description: 'Records per page.',
  })
  @IsOptional()
  @Transform(toInteger)
  @IsInt({ message: LIMIT_MESSAGE })
  @Min(1, { message: LIMIT_MESSAGE })
  @Max(MAX_PAGE_SIZE, { message: LIMIT_MESSAGE })
  limit?: number;
}

export class ResultModeDto {
  @ApiPropertyOptional({ enum: ['paginated'] })
  @IsOptional()
  @IsIn(['paginated'], { message: 'The mode must be paginated.' })
  mode?: 'paginated';

  @ApiPropertyOptional({ type: () => PageAttributesDto })
  @IsOptional()
  @IsObject({ message: 'The attributes must be an object: result_mode[attributes][page]=….' })
  @ValidateNested()
  @Type(() => PageAttributesDto)
  attributes?: PageAttributesDto;
}

/** `result_mode[mode]`, `result_mode[attributes][page]`, `result_mode[attributes][limit]` (CONTRACT §7). */
export class PageQueryDto {
  // Documented as three bracketed parameters by @ApiPaginatedResponse instead.
  @ApiHideProperty()
  @IsOptional()
  @IsObject({ message: 'The result_mode must be an object: result_mode[mode]=paginated.' })
  @ValidateNested()
  @Type(() => ResultModeDto)
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
