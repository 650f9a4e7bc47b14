import { DataSource } from 'typeorm';
import { configuredValue, DEFAULT_DATABASE_URL } from './src/config/environment.js';
import { buildDataSourceOptions } from './src/database/index.js';

/**
 * The TypeORM CLI's data source (`npm run migration:run`, the drift check): no statement limit,
 * so that a long data migration can be run by hand before the servers start (they apply pending
 * migrations under the limit). AppModule is loaded first, so that every module's
 * DatabaseModule.forFeature() registration is seen. The CLI awaits this export; the app is not
 * loaded until it does.
 */
export default {
  then<T>(resolve: (dataSource: DataSource) => T, reject: (error: unknown) => T) {
    // The server's database: `.env`'s DATABASE_URL when the environment has none. Read before
    // AppModule is, whose ConfigModule writes the default into process.env.
    const url = configuredValue('DATABASE_URL') || DEFAULT_DATABASE_URL;
    return import('./src/app.module.js')
      .then(
        () =>
          new DataSource(
            buildDataSourceOptions({
              url,
              statementTimeoutMs: 0,
            }),
          ),
      )
      .then(resolve, reject);
  },
};
