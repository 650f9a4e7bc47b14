import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { buildDataSourceOptions } from '../../ormconfig.js';
import type { Environment } from '../config/environment.js';

/** The one connection of the app; pending migrations are applied when it opens. */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<Environment, true>) => ({
        ...buildDataSourceOptions({
          url: config.get('DATABASE_URL', { infer: true }),
          poolSize: config.get('DATABASE_POOL_SIZE', { infer: true }),
          migrationsRun: true,
        }),
        // A database that cannot be opened stops the start at once, in one line (main.ts), not
        // after Nest's default 9 retries of 3 s each with a stack trace apiece.
        retryAttempts: 0,
      }),
    }),
  ],
})
export class DatabaseModule {}
