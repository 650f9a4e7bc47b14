import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

/**
 * One line per answered request: `{req: {id, method, url, remoteAddress}, res: {statusCode},
 * responseTime}` at info, warn for 4xx, error for 5xx. The URL loses secret query parameters in
 * the logger's serializer; headers and bodies are never logged.
 */
export function logRequests(fastify: FastifyInstance, root: Logger) {
  fastify.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode;
    const level = status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
    if (root.isLevelEnabled(level)) {
      root[level](
        { req: request, res: reply, responseTime: Math.round(reply.elapsedTime * 10) / 10 },
        'request completed',
      );
    }
    done();
  });
}
