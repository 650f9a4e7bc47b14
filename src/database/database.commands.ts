import { DataSource } from 'typeorm';
import { buildDataSourceOptions } from './data-source-options.js';
import type { CliCommand } from '../cli/cli-command.js';

export const dbStatusCommand: CliCommand = {
  name: 'db:status',
  usage: 'db:status',
  description: 'Lists the applied and the pending migrations.',
  options: {},
  context: 'env',
  async run({ env }) {
    // Every module's DatabaseModule.forFeature() registration, as the app sees them.
    await import('../app.module.js');
    const dataSource = new DataSource(buildDataSourceOptions({ url: env.DATABASE_URL }));
    await dataSource.initialize();
    try {
      const table = dataSource.options.migrationsTableName ?? 'migrations';
      const hasTable = await dataSource.createQueryRunner().hasTable(table);
      const rows: { name: string }[] = hasTable
        ? await dataSource.query(`SELECT name FROM ${table} ORDER BY id`)
        : [];
      const applied = rows.map((row) => row.name);
      const pending = dataSource.migrations
        .map((migration) => migration.name ?? migration.constructor.name)
        .filter((name) => !applied.includes(name));
      return { database: dataSource.options.type, applied, pending };
    } finally {
      await dataSource.destroy();
    }
  },
};
