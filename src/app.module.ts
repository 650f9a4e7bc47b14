import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { AuthModule } from './auth/auth.module.js';
import { ClusterModule } from './cluster/cluster.module.js';
import { BeforeBodyChecks } from './common/before-body-checks.js';
import { AllExceptionsFilter } from './common/filters/all-exceptions.filter.js';
import { AppValidationPipe } from './common/pipes/validation.pipe.js';
import { validateEnvironment } from './config/environment.js';
import { CustomersModule } from './customers/customers.module.js';
import { DatabaseModule } from './database/index.js';
import { HealthModule } from './health/health.module.js';
import { LearningModule } from './learning/learning.module.js';
import { LoggingModule } from './logging/logging.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { PaginationModule } from './pagination/pagination.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';

@Module({
  imports: [
    ConfigModule.forRoot({
      isGlobal: true,
      // main.ts and cli.ts read `.env` before Nest boots (loadEnvFile): HOST, PORT and start-up
      // validation need it earlier than this module exists.
      ignoreEnvFile: true,
      cache: true,
      validate: validateEnvironment,
    }),
    LoggingModule,
    DatabaseModule,
    ClusterModule,
    MetricsModule,
    HealthModule,
    AuthModule,
    PaginationModule,
    CustomersModule,
    WebhooksModule,
    LearningModule,
  ],
  providers: [
    BeforeBodyChecks,
    { provide: APP_PIPE, useClass: AppValidationPipe },
    { provide: APP_FILTER, useClass: AllExceptionsFilter },
  ],
})
export class AppModule {}
