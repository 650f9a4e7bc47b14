import { Global, Module } from '@nestjs/common';
import { ClusterEvents } from './cluster-events.js';
import { RedisConnection } from './redis-connection.js';

/** What several instances of the service share beyond the database (CONTRACT §9). */
@Global()
@Module({
  providers: [RedisConnection, ClusterEvents],
  exports: [RedisConnection, ClusterEvents],
})
export class ClusterModule {}
