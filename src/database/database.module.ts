import { Global, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from '../../ormconfig.js';
import type { Environment } from '../config/environment.js';
import { Database } from './database.js';

/**
 * The database of the app: TypeORM's DataSource (pending migrations are applied when it opens)
 * and the Database service every repository reads and writes through.
 */
@Global()
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
  providers: [
    {
      provide: Database,
      inject: [DataSource, ConfigService],
      useFactory: (dataSource: DataSource, config: ConfigService<Environment, true>) =>
        Database.open(dataSource, {
          lockTimeoutMs: config.get('SQLITE_LOCK_TIMEOUT_MS', { infer: true }),
        }),
    },
  ],
  exports: [Database],
})
export class DatabaseModule {}
