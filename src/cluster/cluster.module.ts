import { Global, Module } from '@nestjs/common';
import { RedisConnection } from './redis-connection.js';

/** What several instances of the service share beyond the database (CONTRACT §9). */
@Global()
@Module({
  providers: [RedisConnection],
  exports: [RedisConnection],
})
export class ClusterModule {}
