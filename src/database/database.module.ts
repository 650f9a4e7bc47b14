import { type DynamicModule, Global, Inject, Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from './data-source-options.js';
import type { Environment } from '../config/environment.js';
import { Database } from './database.js';
import { type DatabaseFeature, registerFeature } from './features.js';
import { ListCountsFolder } from './list-counts-folder.js';
import { type AnyPagedList, PagedList } from './paged-list.js';

/** Where a feature module's registrations go (DatabaseModule.forFeature()). */
@Module({})
class DatabaseFeatureModule {}

/**
 * The database of the app: TypeORM's DataSource (pending migrations are applied when it opens)
 * and the Database service every repository reads and writes through. A feature module brings
 * its own entities, migrations and paged lists with DatabaseModule.forFeature().
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
    ListCountsFolder,
  ],
  exports: [Database, ListCountsFolder],
})
export class DatabaseModule {
  /**
   * A feature's entities (injectable with @InjectRepository), migrations and paged lists
   * (injectable with @InjectList), registered for the app, the CLI and the TypeORM CLI alike
   * (features.ts): a new module touches no central list.
   */
  static forFeature(feature: DatabaseFeature): DynamicModule {
    registerFeature(feature);
    const typeorm = TypeOrmModule.forFeature(feature.entities ?? []);
    const lists = (feature.lists ?? []).map((list) => ({
      provide: list.token,
      inject: [Database],
      useFactory: (db: Database) => new PagedList(db, list),
    }));
    return {
      module: DatabaseFeatureModule,
      imports: [typeorm],
      providers: lists,
      exports: [typeorm, ...lists.map((list) => list.provide)],
    };
  }
}

/** Injects the PagedList of a list registered with DatabaseModule.forFeature({ lists }). */
export const InjectList = (list: AnyPagedList) => Inject(list.token);
