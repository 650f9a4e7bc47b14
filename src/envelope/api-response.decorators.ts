import { applyDecorators, HttpStatus, Type } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiProperty,
  ApiQuery,
  ApiResponse,
  ApiUnprocessableEntityResponse,
  getSchemaPath,
} from '@nestjs/swagger';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../pagination/page-query.dto.js';

export class PageMetaDto {
  @ApiProperty({ type: 'integer', example: 2 }) current_page: number;
  @ApiProperty({ nullable: true, type: 'integer', example: 11 }) from: number | null;
  @ApiProperty({ nullable: true, type: 'integer', example: 20 }) to: number | null;
  @ApiProperty({ type: 'integer', example: 5 }) last_page: number;
  @ApiProperty({ type: 'integer', example: 10 }) per_page: number;
  @ApiProperty({ type: 'integer', example: 42 }) total: number;
}

export class ValidationErrorDto {
  @ApiProperty({ example: 'The given data was invalid.' }) message: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    example: {
      'result_mode.attributes.limit': [`The limit must be between 1 and ${MAX_PAGE_SIZE}.`],
    },
  })
  errors: Record<string, string[]>;
}

/** `{data: <model>}` response schema (the envelope every /v2 route answers with). */
export function ApiDataResponse(model: Type<unknown>, status: number = HttpStatus.OK) {
  return applyDecorators(
    ApiExtraModels(model),
    ApiResponse({
      status,
      schema: {
        type: 'object',
        required: ['data'],
        properties: { data: { $ref: getSchemaPath(model) } },
      },
    }),
  );
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
      schema: { type: 'integer', minimum: 1, default: 1 },
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
