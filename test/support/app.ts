import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from './database.js';
import { ResponseContract } from './openapi-contract.js';

export interface TestApp {
  app: NestFastifyApplication;
  /** For supertest: `request(t.http)`. */
  http: ReturnType<NestFastifyApplication['getHttpServer']>;
  db: DataSource;
  database: TestDatabase;
  /** Every route Fastify registered, as "METHOD /path". */
  routes: string[];
  close(): Promise<void>;
}

/**
 * Boots the real AppModule on the real Fastify adapter, configured exactly as main.ts does,
 * on a fresh database built by the real migrations.
 */
export interface TestAppOptions {
  env?: Record<string, string>;
  /** Extra modules booted beside AppModule (test-only controllers, webhook events…). */
  imports?: ModuleImport[];
  /** Rewrites the fresh database's URL before the app sees it (e.g. to go through a proxy). */
  mapDatabaseUrl?: (url: string) => string | Promise<string>;
}

type ModuleImport = NonNullable<Parameters<typeof Test.createTestingModule>[0]['imports']>[number];

export async function startTestApp({
  env = {},
  imports = [],
  mapDatabaseUrl = (url) => url,
}: TestAppOptions = {}): Promise<TestApp> {
  const database = await createTestDatabase();
  Object.assign(process.env, { DATABASE_URL: await mapDatabaseUrl(database.url), ...env });

  // Imported only now: ConfigModule validates process.env when app.module is first evaluated.
  const { AppModule } = await import('../../src/app.module.js');
  const { configureApp, createAdapter } = await import('../../src/bootstrap.js');
  const { validateEnvironment } = await import('../../src/config/environment.js');
  const { createApiDocument } = await import('../../src/common/openapi/api-document.js');
  const settings = validateEnvironment(process.env);

  const moduleRef = await Test.createTestingModule({ imports: [AppModule, ...imports] }).compile();
  const adapter = createAdapter(settings);
  const contract = new ResponseContract();
  contract.install(adapter.getInstance());
  const routes: string[] = [];
  adapter.getInstance().addHook('onRoute', (route) => {
    for (const method of ([] as string[]).concat(route.method)) {
      if (method !== 'HEAD') routes.push(`${method} ${route.url}`);
    }
  });
  const app = moduleRef.createNestApplication<NestFastifyApplication>(adapter, {
    bodyParser: false,
    bufferLogs: true,
  });
  await configureApp(app, settings);
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  contract.load(createApiDocument(app) as never);

  return {
    app,
    http: app.getHttpServer(),
    db: app.get(DataSource),
    database,
    routes,
    close: async () => {
      await app.close();
      await database.drop();
      if (contract.violations.length > 0) {
        throw new Error(
          `Responses that the OpenAPI document does not describe:\n${[...new Set(contract.violations)].join('\n')}`,
        );
      }
    },
  };
}
