import {
  Global,
  Injectable,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { ListenFailure } from '../common/listen-failure.js';
import { HTTP_LAYER_MESSAGES, requestIdOf } from '../common/filters/http-layer-errors.js';
import type { Environment } from '../config/environment.js';
import { Metrics } from './metrics.service.js';

/**
 * With METRICS_PORT set, an HTTP server (only) counts its requests and serves GET /metrics on
 * that port, apart from the API, so that the API's port never exposes them. Without it nothing
 * is measured per request. A CLI application context has no HTTP server and serves nothing.
 */
@Injectable()
export class MetricsEndpoint implements OnModuleInit, OnApplicationShutdown {
  private server?: Server;

  constructor(
    private readonly metrics: Metrics,
    private readonly adapterHost: HttpAdapterHost,
    private readonly config: ConfigService<Environment, true>,
  ) {}

  async onModuleInit() {
    const port = this.config.get('METRICS_PORT', { infer: true });
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (port === undefined || !fastify) return;

    this.metrics.collectProcessMetrics();
    fastify.addHook('onResponse', (request, reply, done) => {
      this.metrics.request(
        request.method,
        request.routeOptions.url ?? 'unmatched',
        reply.statusCode,
        reply.elapsedTime / 1000,
      );
      done();
    });

    const registry = this.metrics.registry;
    this.server = createServer((req, res) => {
      // As on the API's port (docs/contract.md §1, §2): an id on every answer, HEAD as GET.
      res.setHeader('x-request-id', requestIdOf(req));
      const known = req.url?.split('?')[0] === '/metrics';
      if (!known || (req.method !== 'GET' && req.method !== 'HEAD')) {
        res
          .writeHead(404, { 'content-type': 'application/json; charset=utf-8' })
          .end(JSON.stringify({ message: HTTP_LAYER_MESSAGES[404] }));
        return;
      }
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
    });
    const host = this.config.get('HOST', { infer: true });
    this.server.listen(port, host);
    await once(this.server, 'listening').catch((error: Error) => {
      throw new ListenFailure(
        `cannot listen on METRICS_PORT ${port} (HOST ${host}): ${error.message}`,
      );
    });
  }

  async onApplicationShutdown() {
    if (!this.server) return;
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }
}

@Global()
@Module({ providers: [Metrics, MetricsEndpoint], exports: [Metrics] })
export class MetricsModule {}
