import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { releaseWhenAnswered } from '../common/memory-budget.js';
import { LoggedRequest } from '../config/logger.config.js';

interface RequestLog {
  root: Logger;
  /** Every literal path segment of the routes served (`v2`, `customers`, `openapi.json`…). */
  words: Set<string>;
}

const logs = new WeakMap<FastifyInstance, RequestLog>();
const ID = /^[0-9]{1,20}$/;

/**
 * One line per answered request: `{req: {id, method, url, remoteAddress}, res: {statusCode},
 * responseTime}` at info, warn for 4xx, error for 5xx (and `clientGone: true` when its client
 * left first). The URL as urlForLog leaves it; headers and bodies are never logged.
 */
export function logRequests(fastify: FastifyInstance, root: Logger) {
  const words = new Set<string>();
  fastify.addHook('onRoute', ({ url }) => {
    for (const segment of url.split('/')) {
      if (segment && !/[:*]/.test(segment)) words.add(segment);
    }
  });
  const log: RequestLog = { root, words };
  logs.set(fastify, log);
  // One line per request. An answer written out is logged then (onResponse). Node finishes no
  // answer whose client left before it was written (one queued behind another on its
  // connection, say): it is logged when its connection closes, with the status the answer had
  // and `clientGone` (a webhook stored and processed, say, that its sender will send again).
  fastify.addHook('onResponse', (request, reply, done) => {
    if (reply.raw.writableFinished) {
      write(log, () => requestForLog(request, words), reply.statusCode, reply.elapsedTime);
    }
    done();
  });
  fastify.addHook('onSend', (request, reply, payload, done) => {
    releaseWhenAnswered(reply.raw, () => {
      if (reply.raw.writableFinished || answeredByHttpLayer.has(reply.raw)) return;
      write(log, () => requestForLog(request, words), reply.statusCode, reply.elapsedTime, true);
    });
    done(null, payload);
  });
}

/** Responses of requests under way that the HTTP layer answered itself (a body broken off). */
const answeredByHttpLayer = new WeakSet<ServerResponse>();

/**
 * The line of an answer the HTTP layer sent itself, where no onResponse hook runs (a malformed
 * URL; a request Node's parser refused, of which only the address is known, or whose body broke
 * off: that request's line, in place of the one it would have had).
 */
export function logHttpLayerAnswer(
  fastify: FastifyInstance,
  request: FastifyRequest | HttpLayerRequest,
  status: number,
) {
  const log = logs.get(fastify);
  if (!log) return;
  if (!('raw' in request) && request.response) answeredByHttpLayer.add(request.response);
  const logged = () =>
    'raw' in request
      ? requestForLog(request, log.words)
      : new LoggedRequest(
          request.id,
          request.method,
          request.url === undefined ? undefined : urlForLog(request.url, log.words),
          request.remoteAddress,
        );
  write(log, logged, status);
}

/** What the HTTP layer knows of a request it answered. */
interface HttpLayerRequest {
  id: string;
  remoteAddress?: string;
  method?: string;
  url?: string;
  /** The response of a request under way, whose own line this is. */
  response?: ServerResponse;
}

/** Writes the line; `req` is only built when the level is enabled (it costs a URL's decoding). */
function write(
  log: RequestLog,
  req: () => LoggedRequest,
  status: number,
  elapsed?: number,
  clientGone?: true,
) {
  // A 503 is the service shedding load or waiting for its database, a condition to watch, not a
  // fault: at error level a burst of them would bury the errors that need someone.
  const level = status >= 500 && status !== 503 ? 'error' : status >= 400 ? 'warn' : 'info';
  if (!log.root.isLevelEnabled(level)) return;
  const responseTime = elapsed === undefined ? undefined : Math.round(elapsed * 10) / 10;
  log.root[level](
    { req: req(), res: { statusCode: status }, responseTime, clientGone },
    'request completed',
  );
}

function requestForLog(request: FastifyRequest, words: ReadonlySet<string>): LoggedRequest {
  const url = urlForLog(request.url, words, request.routeOptions?.url);
  return new LoggedRequest(request.id, request.method, url, request.ip);
}

/**
 * What is logged of a URL: a token, secret or password may be sent anywhere in it, in any
 * encoding, so nothing the caller chose is logged unless it cannot be one. A path segment is
 * kept when, percent-decoded, it is a literal segment of a route the service serves, or a number
 * of at most 20 digits where the matched route has a parameter (`/v2/customers/42/company`);
 * any other segment is `*`. A query string is `?*`, whatever it holds.
 */
export function urlForLog(url: string, words: ReadonlySet<string>, route?: string): string {
  const query = url.indexOf('?');
  const pattern = route?.split('/') ?? [];
  const path = (query === -1 ? url : url.slice(0, query)).split('/').map((raw, i) => {
    if (raw === '') return raw;
    const segment = percentDecoded(raw);
    if (words.has(segment)) return segment;
    return ID.test(segment) && pattern[i]?.startsWith(':') ? segment : '*';
  });
  return path.join('/') + (query === -1 ? '' : '?*');
}

/** Percent-decoding until stable (`%2576` is `%76` is `v`), byte by byte so that it never throws. */
function percentDecoded(text: string): string {
  let current = text;
  for (let round = 0; round < 3 && current.includes('%'); round++) {
    current = current.replace(/%([0-9a-f]{2})/gi, (_, hex: string) =>
      String.fromCharCode(parseInt(hex, 16)),
    );
  }
  return current;
}
