import { RequestMethod } from '@nestjs/common';
import type { Params } from 'nestjs-pino';
import pino, { DestinationStream } from 'pino';
import type { Environment } from './environment.js';

let streamOverride: DestinationStream | undefined;

/** Test hook: send the service's logs to `stream` (apps created afterwards). */
export function useLogStream(stream: DestinationStream | undefined) {
  streamOverride = stream;
}

const SECRET_QUERY = /([?&](?:access_token|token|client_secret|password|code)=)[^&]*/gi;

/** nestjs-pino options: JSON lines with the request id; no headers, bodies or secret params. */
export function loggerParams(env: Pick<Environment, 'LOG_LEVEL'>): Params {
  const destination =
    streamOverride ??
    pino.destination({ dest: process.env.LOG_DESTINATION === 'stderr' ? 2 : 1, sync: false });
  return {
    // nestjs-pino's default '{/*splat}' does not match on the Fastify adapter; this does.
    forRoutes: [{ path: '{*splat}', method: RequestMethod.ALL }],
    pinoHttp: [
      {
        level: env.LOG_LEVEL,
        genReqId: (req) => (req as { id?: string }).id ?? 'unknown',
        redact: {
          paths: [
            'req.headers.authorization',
            'req.headers.cookie',
            'req.headers["proxy-authorization"]',
            'res.headers["set-cookie"]',
            '*.password',
            '*.client_secret',
            '*.access_token',
            '*.token',
          ],
          censor: '[redacted]',
        },
        serializers: {
          req: (req: { id: string; method: string; url: string; remoteAddress?: string }) => ({
            id: req.id,
            method: req.method,
            url: String(req.url).replace(SECRET_QUERY, '$1[redacted]'),
            remoteAddress: req.remoteAddress,
          }),
          res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        },
        customLogLevel: (_req, res, err) =>
          err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
      },
      destination,
    ],
  };
}
