import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { ServiceUnavailableApiException } from '../common/exceptions/api.exception.js';
import { Database } from '../database/database.js';
import { RawResponse } from '../envelope/envelope.js';

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
  @ApiOkResponse({ schema: { example: { status: 'ok' } } })
  live() {
    return { status: 'ok' };
  }

  /**
   * Readiness: the database answers a query within 2 s, and (SQLite) writes have not found the
   * file locked by another process for longer than SQLITE_LOCK_TIMEOUT_MS.
   */
  @Get('ready')
  @HealthCheck()
  @ApiOkResponse({ schema: { example: { status: 'ok', database: 'up' } } })
  @ApiServiceUnavailableResponse({
    description: 'The database cannot be reached, or (SQLite) is locked by another process.',
    schema: { example: { message: 'The database cannot be reached.' } },
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
