import { Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DataSource } from 'typeorm';
import { buildDataSourceOptions, Database } from '../../src/database/index.js';
import { ClusterEvents } from '../../src/cluster/cluster-events.js';
import { RedisConnection } from '../../src/cluster/redis-connection.js';
import { createTestDatabase, TestDatabase, usingPostgres } from '../support/database.js';

/**
 * ClusterEvents on PostgreSQL LISTEN/NOTIFY between two "instances" (two connections pools and
 * two listeners on one database), including the loss of the listening connection.
 */
(usingPostgres() ? describe : describe.skip)(
  usingPostgres()
    ? 'ClusterEvents on PostgreSQL'
    : 'ClusterEvents on PostgreSQL (skipped: needs PostgreSQL, set TEST_DATABASE_URL)',
  () => {
    let database: TestDatabase;
    const sources: DataSource[] = [];
    const events: ClusterEvents[] = [];
    const received: (string | null)[][] = [[], []];
    const logged: string[] = [];

    beforeAll(async () => {
      const record = (message: unknown) => void logged.push(String(message));
      Logger.overrideLogger({ log: record, warn: record, error: record });
      database = await createTestDatabase();
      const config = new ConfigService({ DATABASE_URL: database.url });
      for (let i = 0; i < 2; i++) {
        const source = new DataSource(buildDataSourceOptions({ url: database.url }));
        await source.initialize();
        sources.push(source);
        const db = await Database.open(source, { lockTimeoutMs: 5000 });
        const bus = new ClusterEvents(config as never, new RedisConnection(config as never), db);
        bus.subscribe('token-state', (message) => void received[i].push(message));
        events.push(bus);
      }
      await until(async () => (await listeners()).length === 2);
    });
    afterAll(async () => {
      await Promise.all(events.map((e) => e.onModuleDestroy()));
      await Promise.all(sources.map((s) => s.destroy()));
      await database.drop();
    });

    const listeners = async () =>
      (await sources[0].query(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'",
      )) as { pid: number }[];
    async function until(condition: () => boolean | Promise<boolean>) {
      const deadline = Date.now() + 15000;
      while (!(await condition())) {
        if (Date.now() > deadline) throw new Error('condition not met within 15 s');
        await new Promise((r) => setTimeout(r, 20));
      }
    }

    it('delivers a message to every instance, the sender included', async () => {
      expect(events[0].channel).toBe('postgres');
      await events[0].publish('token-state', 'one');
      await until(() => received.every((r) => r.includes('one')));
      expect(received).toEqual([['one'], ['one']]);
    });

    it('tells its listeners to reload after its listening connection was lost, and delivers again', async () => {
      const [first] = await listeners();
      await sources[0].query('SELECT pg_terminate_backend($1)', [first.pid]);
      // Reconnected within about a second, then a reload signal (null) to the one that lost it.
      await until(() => received.some((r) => r.includes(null)));
      expect(received.filter((r) => r.includes(null))).toHaveLength(1);
      await until(async () => (await listeners()).length === 2);
      await events[1].publish('token-state', 'two');
      await until(() => received.every((r) => r.includes('two')));
      expect(logged).toEqual([
        'lost the connection that listens for cluster messages; retrying every second, periodic refresh meanwhile',
        'listening for cluster messages again',
      ]);
    });
  },
);
