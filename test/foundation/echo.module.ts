import { Body, Controller, Get, Module, Param, Post, Query } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, ValidateNested } from 'class-validator';
import { RawResponse } from '../../src/common/decorators/raw-response.decorator.js';
import { Page } from '../../src/pagination/page.js';

class NestedDto {
  @IsInt()
  count: number;
}

class EchoDto {
  @IsString()
  name: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => NestedDto)
  nested?: NestedDto;
}

/** Test-only routes that exercise the global edges (pipe, filter, parsers). */
@Controller('test')
class EchoController {
  @Post('echo')
  echo(@Body() body: EchoDto) {
    return body;
  }

  @Get('boom')
  boom(): never {
    throw new Error('secret detail');
  }

  @Get('query')
  query(@Query() query: unknown) {
    return query;
  }

  @Get('items/:name')
  item(@Param('name') name: string) {
    return { name };
  }
}

/** Test-only routes for the envelope: what gets `{data}`, `{data, meta}`, or nothing. */
@Controller('test/envelope')
class EnvelopeController {
  @Get('list')
  list() {
    return [1, 2];
  }

  @Get('page')
  page() {
    return new Page([{ id: 3 }], 21, { page: 2, limit: 10, offset: 10 });
  }

  @Get('raw')
  @RawResponse()
  raw() {
    return { status: 'as is' };
  }
}

@RawResponse()
@Controller('test/raw')
class RawController {
  @Get()
  raw() {
    return { status: 'as is' };
  }
}

@Module({ controllers: [EchoController, EnvelopeController, RawController] })
export class EchoModule {}
