import type { MigrationInterface, ObjectLiteral } from 'typeorm';
import { entities as coreEntities } from './entities.js';
import { migrations as coreMigrations } from './migrations.js';
import type { AnyPagedList } from './paged-list.js';

/** What a feature module brings to the database (DatabaseModule.forFeature()). */
export interface DatabaseFeature {
  /** Its TypeORM entities (also injectable with @InjectRepository). */
  entities?: (new () => ObjectLiteral)[];
  /** Its migrations; they run in timestamp order with every other. */
  migrations?: (new () => MigrationInterface)[];
  /** Its paged lists (defineList()), injectable with @InjectList(). */
  lists?: AnyPagedList[];
}

/**
 * Features registered so far. A module registers when its file is evaluated (its @Module()
 * decorator calls forFeature()), before any DataSource is built from them: the app's
 * (DatabaseModule), the CLI's and the TypeORM CLI's (ormconfig.ts load AppModule first), so all
 * three see the same entities and migrations.
 */
const registered = {
  entities: new Set<new () => ObjectLiteral>(),
  migrations: new Set<new () => MigrationInterface>(),
  lists: new Set<AnyPagedList>(),
};

export function registerFeature(feature: DatabaseFeature): void {
  for (const entity of feature.entities ?? []) registered.entities.add(entity);
  for (const migration of feature.migrations ?? []) registered.migrations.add(migration);
  for (const list of feature.lists ?? []) registered.lists.add(list);
}

/** The core entities and migrations, then those of every feature registered so far. */
export function registeredFeatures() {
  return {
    entities: [...new Set([...coreEntities, ...registered.entities])],
    migrations: [...new Set([...coreMigrations, ...registered.migrations])],
    lists: [...registered.lists],
  };
}
