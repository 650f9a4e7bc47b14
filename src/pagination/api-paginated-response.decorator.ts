import { applyDecorators, HttpStatus, Type } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiProperty,
  ApiQuery,
  ApiResponse,
  ApiUnprocessableEntityResponse,
  getSchemaPath,
} from '@nestjs/swagger';
import { ValidationErrorDto } from '../common/openapi/api-response.decorators.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './page-query.dto.js';

export class PageMetaDto {
  @ApiProperty({ type: 'integer', example: 2 }) current_page: number;
  @ApiProperty({ nullable: true, type: 'integer', example: 11 }) from: number | null;
  @ApiProperty({ nullable: true, type: 'integer', example: 20 }) to: number | null;
  @ApiProperty({ type: 'integer', example: 5 }) last_page: number;
  @ApiProperty({ type: 'integer', example: 10 }) per_page: number;
  @ApiProperty({ type: 'integer', example: 42 }) total: number;
}

/** A paged route: the three `result_mode` query parameters and the `{data: [...], meta}` schema. */
export function ApiPaginatedResponse(model: Type<unknown>) {
  return applyDecorators(
    ApiExtraModels(model, PageMetaDto, ValidationErrorDto),
    ApiQuery({
      name: 'result_mode[mode]',
      required: false,
      schema: { type: 'string', enum: ['paginated'] },
    }),
    ApiQuery({
      name: 'result_mode[attributes][page]',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, default: 1 },
    }),
    ApiQuery({
      name: 'result_mode[attributes][limit]',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
    }),
    ApiResponse({
      status: HttpStatus.OK,
      schema: {
        type: 'object',
        required: ['data', 'meta'],
        properties: {
          data: { type: 'array', items: { $ref: getSchemaPath(model) } },
          meta: { $ref: getSchemaPath(PageMetaDto) },
        },
      },
    }),
    ApiUnprocessableEntityResponse({ type: ValidationErrorDto }),
  );
}
