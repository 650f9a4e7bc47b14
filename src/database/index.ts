/*
 * The data layer as the rest of the service sees it: every import from outside src/database/
 * comes from this file (eslint.config.js refuses any other), so what is listed here is all a
 * newcomer needs to know of the folder. The drivers, the SQLite connections and turn batching,
 * TypeORM internals and the dialect stay behind it. Migrations are the one exception: they
 * import a versioned helper of frozen/ by its path, as frozen text.
 */

// Feature modules: registration, reads and writes, paged lists, conflict-skipping inserts.
export { DatabaseModule, InjectList } from './database.module.js';
export { Database } from './database.js';
export { defineList, type PagedList } from './paged-list.js';
export { insertUnlessConflict } from './insert-unless-conflict.js';
export { PostgresNotifications } from './postgres-notifications.js';

// Wiring: the CLI's db:status; DATABASE_URL as TypeORM options (the TypeORM CLI's ormconfig.ts,
// tests that open a DataSource of their own), as it may be logged (main.ts) and the SQLite file
// it names (the CLI's note on a file it makes).
export { dbStatusCommand } from './database.commands.js';
export { buildDataSourceOptions, databaseForLog, sqliteFile } from './data-source-options.js';

// Tests: the core migrations in order (to migrate a database up to one of them), folding count
// changes on demand, and the block sizes (to place rows in chosen blocks).
export { migrations } from './migrations.js';
export { ListCountsFolder } from './list-counts-folder.js';
export { BLOCKS_PER_SUPERBLOCK, POSITION_BLOCK_SIZE } from './paged-list.js';
