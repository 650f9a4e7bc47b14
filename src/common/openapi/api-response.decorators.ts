import { applyDecorators, HttpStatus, Type } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { MAX_PAGE_SIZE } from '../../pagination/page-query.dto.js';

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
