import { Body, Controller, Get, Module, Post, Query } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, ValidateNested } from 'class-validator';

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
}

@Module({ controllers: [EchoController] })
export class EchoModule {}
