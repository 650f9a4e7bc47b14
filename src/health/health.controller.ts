import { Controller, Get } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import { ErrorDto } from '../common/openapi/error.dto.js';
import { HealthCheck, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { ServiceUnavailableApiException } from '../common/exceptions/api.exception.js';
import { Database } from '../database/index.js';
import { RawResponse } from '../common/decorators/raw-response.decorator.js';

@ApiTags('health')
@RawResponse()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly database: Database,
  ) {}

  /** Liveness: the process is up and serving HTTP. */
  @Get()
  @ApiOperation({ summary: 'Liveness: the process is up and serving HTTP.', security: [] })
  @ApiOkResponse({
    schema: {
      type: 'object',
      required: ['status'],
      properties: { status: { type: 'string', enum: ['ok'] } },
      example: { status: 'ok' },
    },
  })
  live() {
    return { status: 'ok' };
  }

  /**
   * Readiness: the database answers a query within 2 s, and (SQLite) writes have not found the
   * file locked by another process for longer than SQLITE_LOCK_TIMEOUT_MS.
   */
  @Get('ready')
  // Terminus's own document describes its result object, which this route does not send.
  @HealthCheck({ swaggerDocumentation: false })
  @ApiOperation({ summary: 'Readiness: the database answers.', security: [] })
  @ApiOkResponse({
    schema: {
      type: 'object',
      required: ['status', 'database'],
      properties: {
        status: { type: 'string', enum: ['ok'] },
        database: { type: 'string', enum: ['up'] },
      },
      example: { status: 'ok', database: 'up' },
    },
  })
  @ApiServiceUnavailableResponse({
    type: ErrorDto,
    description: 'The database cannot be reached, or (SQLite) is locked by another process.',
  })
  async ready() {
    if (this.database.writesBlocked()) {
      throw new ServiceUnavailableApiException('The database is locked by another process.');
    }
    try {
      await this.health.check([() => this.db.pingCheck('database', { timeout: 2000 })]);
    } catch {
      throw new ServiceUnavailableApiException('The database cannot be reached.');
    }
    return { status: 'ok', database: 'up' };
  }
}
