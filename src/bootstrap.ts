import { processMemory, type Release, releaseWhenAnswered } from './common/memory-budget.js';
import { serializeReply } from './common/raw-json.js';
import { BeforeBodyChecks } from './common/before-body-checks.js';
import type { Socket } from 'node:net';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import { NotFoundException, type RawBodyRequest } from '@nestjs/common';
import type { FastifyReply, FastifyRequest, RequestPayload, RouteOptions } from 'fastify';
import helmet from 'helmet';
import { assertReadable, assertUtf8, formBody, jsonBody } from './common/parsers/body-parsers.js';
import { isOAuthRequest, OAUTH_BODY_LIMIT_BYTES, OAUTH_ROUTE } from './common/oauth-routes.js';
import {
  countArriving,
  COUNTED_FROM_BYTES,
  noRoomToArrive,
} from './common/parsers/arriving-bodies.js';
import { onePerTurn } from './common/parsers/one-per-turn.js';
import { keepRawBody } from './common/parsers/raw-body.js';
import { parseQuery, refuseMarkedQueries } from './common/parsers/query-parser.js';
import {
  BODY_LIMIT_BYTES,
  clientErrorHandler,
  connectRefused,
  expectationFailed,
  frameworkErrors,
  headStatus,
  originForm,
  PARSER_HEAD_LIMIT_BYTES,
  refuseInHook,
  requestIdOf,
  URL_LIMIT_BYTES,
} from './common/filters/http-layer-errors.js';
import { createApiDocument } from './common/openapi/api-document.js';
import type { Environment } from './config/environment.js';
import { fastifyTrustProxy } from './config/trust-proxy.js';
import { AppLogger } from './logging/app-logger.js';
import { ROOT_LOGGER } from './logging/logging.module.js';
import { logRequests } from './logging/request-log.js';

type AdapterSettings = Pick<
  Environment,
  | 'TRUST_PROXY'
  | 'HTTP_HEADERS_TIMEOUT_MS'
  | 'HTTP_REQUEST_TIMEOUT_MS'
  | 'HTTP_KEEP_ALIVE_TIMEOUT_MS'
>;
type AppSettings = Pick<Environment, 'CORS_ORIGINS'>;

/** Fastify with docs/contract.md §2's limits, bracketed query strings and caller-supplied request ids. */
export function createAdapter(env: AdapterSettings): FastifyAdapter {
  return new FastifyAdapter({
    // No Nest middleware here (hooks and guards do that work), so no @fastify/middie hook on
    // every request. Nest middleware would need middie again: remove this option then.
    skipMiddie: true,
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: fastifyTrustProxy(env.TRUST_PROXY),
    // Slow clients are cut off: headers that trickle in, bodies that never end, answered 408 by
    // Node's checks of the two timeouts (clientErrorHandler). A socket idle for longer, which no
    // such check saw, is closed: later than those checks (two intervals), so that a stalled
    // request is told why rather than cut without an answer.
    connectionTimeout: env.HTTP_REQUEST_TIMEOUT_MS + 2 * checkingInterval(env),
    requestTimeout: env.HTTP_REQUEST_TIMEOUT_MS,
    // Between requests, though, a kept-alive connection waits longer than the clients and
    // proxies in front of the service keep theirs idle, so that they close it, never the server
    // as they send on it (environment.ts).
    keepAliveTimeout: env.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    return503OnClosing: false,
    http: {
      // The URL and header limits are checked on each request (headStatus); Node's parser only
      // stops heads far above them, which it cannot tell apart (http-layer-errors.ts).
      maxHeaderSize: PARSER_HEAD_LIMIT_BYTES,
      // A missing Host is answered 400 in the contract's shape by the onRequest hook, not by
      // Node with an empty body.
      requireHostHeader: false,
      headersTimeout: env.HTTP_HEADERS_TIMEOUT_MS,
      // Node enforces the two timeouts above on this interval (default 30 s).
      connectionsCheckingInterval: checkingInterval(env),
    },
    logger: false,
    frameworkErrors: frameworkErrors(API_HEADERS),
    clientErrorHandler,
    requestIdHeader: false,
    genReqId: requestIdOf,
    // A target in absolute form is the same request as in origin form (RFC 9112 §3.2.2).
    rewriteUrl: (raw: { url?: string }) => originForm(raw.url ?? '/'),
    routerOptions: {
      // A path parameter as long as the URL may be: a long customer_id is an unknown customer
      // (404), and a long URL is 414 whatever its parameters.
      maxParamLength: URL_LIMIT_BYTES,
      querystringParser: parseQuery,
    },
  });
}

/**
 * Security headers, computed once at start (running helmet's middleware per request cost more
 * than half of a simple request's CPU time here).
 *
 * The HTML pages of /docs get helmet's whole set, with a CSP the Swagger UI can run under. JSON
 * answers get the headers that matter for an API (OWASP REST Security Cheat Sheet): nothing may
 * run, frame or embed them, no MIME sniffing, HSTS, no referrer. helmet's headers that only
 * apply to documents a browser renders (Origin-Agent-Cluster, Cross-Origin-Opener-Policy,
 * X-DNS-Prefetch-Control, X-Download-Options, X-Permitted-Cross-Domain-Policies, X-XSS-Protection)
 * are left out there: each header costs time on every response (docs/benchmarks.md).
 */
const DOCS_HEADERS = helmetHeaders({
  contentSecurityPolicy: {
    directives: {
      defaultSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      scriptSrc: ["'self'", "'unsafe-inline'"],
    },
  },
});
const API_HEADERS = helmetHeaders({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
  },
  frameguard: { action: 'deny' },
  originAgentCluster: false,
  crossOriginOpenerPolicy: false,
  dnsPrefetchControl: false,
  ieNoOpen: false,
  permittedCrossDomainPolicies: false,
  xssFilter: false,
});
const DOCS_PATH = '/docs';

function helmetHeaders(options: Parameters<typeof helmet>[0]): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader: (name: string, value: unknown) => (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => delete headers[name.toLowerCase()],
  };
  helmet(options)({} as never, response as never, () => undefined);
  return headers;
}

/** Everything done to the app between creation and listen; shared by main.ts and the tests. */
export async function configureApp(app: NestFastifyApplication, env: AppSettings) {
  app.useLogger(app.get(AppLogger));
  // The lines buffered while the app was created (main.ts turns automatic flushing off so that a
  // failed start does not print them).
  app.flushLogs();
  if (env.CORS_ORIGINS) {
    app.enableCors({
      origin: env.CORS_ORIGINS === '*' ? '*' : env.CORS_ORIGINS.split(','),
      // Every method a route has (the default list leaves out PUT).
      methods: ['GET', 'HEAD', 'POST', 'PUT'],
      // Headers a browser script may read besides the CORS-safelisted ones: the id to quote, when
      // to retry, and why a token was refused.
      exposedHeaders: ['X-Request-Id', 'Retry-After', 'WWW-Authenticate'],
      // A preflight is answered by the plugin's OPTIONS route, not in its hook (Nest runs that
      // first of all): after the hook below, so it carries the request id and the security
      // headers as every other answer does. An OPTIONS request that is not a preflight (no
      // Origin or Access-Control-Request-Method) is answered the same, not with a plain-text 400.
      preflightContinue: true,
      strictPreflight: false,
    });
  }

  const fastify = app.getHttpAdapter().getInstance();
  logRequests(fastify, app.get(ROOT_LOGGER));
  // JSON.stringify, except that stored JSON text (RawJson: webhook payloads) is sent as it is.
  fastify.setReplySerializer(serializeReply);
  // While shutting down, requests that still arrive on kept-alive connections are refused in the
  // contract's shape (Fastify's own 503 body is not); those already taken in finish normally.
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    // A connection whose request finishes from now on is closed right after its answer, not
    // kept idle for the keep-alive timeout (72 s), which the stop would wait out. Idle ones are
    // closed by Fastify as it closes.
    fastify.server.keepAliveTimeout = 1;
    done();
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    reply
      .headers(request.url.startsWith(DOCS_PATH) ? DOCS_HEADERS : API_HEADERS)
      .header('x-request-id', request.id);
    const refused = headStatus(request.raw);
    if (refused) return refuseInHook(reply, refused);
    // `/v2/customers/` matches `/v2/customers/:customer_id` with an empty id: that is no route
    // (docs/contract.md §2: 404 whatever the token), not a customer to authenticate for.
    if (hasEmptyParameter(request)) return void reply.callNotFound();
    if (request.headers.expect !== undefined) {
      // A request with no body that asks for 100 Continue (a GET, say): Node closes the connection
      // after an answer sent without one, and drops the requests pipelined behind it. There is
      // nothing to invite, so the 100 costs nothing.
      if (!announcesBody(request)) reply.raw.writeContinue();
      // An unknown route is 404 whatever its body (CONTRACT §2), which Fastify would read first:
      // a client waiting for 100 Continue is answered at once instead, its body never invited.
      else if (request.is404) return done(new NotFoundException());
    }
    if (!closing) return done();
    refuseInHook(reply, 503, { 'retry-after': '1' });
  });
  refuseMarkedQueries(fastify);
  // An Expect other than 100-continue: Node answers 417 itself, with no body, id or headers,
  // unless the server listens for it (CONTRACT §2: the HTTP layer's errors in the same shape).
  fastify.server.on('checkExpectation', expectationFailed(fastify, API_HEADERS));
  // Expect: 100-continue is answered when the body is about to be read, after the route's checks
  // that come before it (a bearer header missing or ill-formed: CONTRACT §2), not on arrival:
  // a request refused before its body gets its answer, not an invitation to send the body (Node
  // then closes that connection, whose unsent body would otherwise follow).
  fastify.server.on('checkContinue', (req, res) => fastify.server.emit('request', req, res));
  const checks = app.get(BeforeBodyChecks);
  // Hooks of one kind of route, added to those routes alone as they are registered (the app's
  // at init, after this; the docs' file server's below), not run for every request.
  fastify.addHook('onRoute', (route) => {
    if (route.url === `${DOCS_PATH}/*`) addRouteHook(route, 'onRequest', onlyDocsPageFiles);
    else if (UNSERVED_DOCS_ROUTES.has(route.url)) addRouteHook(route, 'onRequest', notFound);
    else if (readsBody(route.method)) {
      // The OAuth endpoints, open to anyone, read few bytes; so does OPTIONS (CORS preflights,
      // answered for any path when CORS is on), which reads none.
      if (OAUTH_ROUTE.test(route.url) || route.method === 'OPTIONS') {
        route.bodyLimit = OAUTH_BODY_LIMIT_BYTES;
      }
      addRouteHook(route, 'preParsing', beforeBody(checks));
      addRouteHook(route, 'onSend', bodyAnswered);
    }
  });
  // A client that shuts its sending side once its request is sent (a half-close, as `nc -N` and
  // some HTTP/1.0 clients do) still gets the answer; Node's default ends the connection at the
  // client's FIN, before the answer is written. The connection closes after that answer.
  (fastify.server as { httpAllowHalfOpen?: boolean }).httpAllowHalfOpen = true;
  // An answer given before the request's body was read (401 before the body, 413) is followed by
  // a close; closed at once, a connection whose client is still sending is reset, and the reset
  // can reach the client before the answer does. Closed gently instead: lingeringClose().
  fastify.server.on('connection', (socket: Socket) => {
    socket.destroySoon = lingeringClose;
    // Read once here, the caller's address stays known to the socket once it has closed: the log
    // line of a request whose client left first (clientGone) names it too.
    void socket.remoteAddress;
  });
  // A CONNECT request: Node closes the connection without a word unless the server listens.
  fastify.server.on('connect', connectRefused(fastify, API_HEADERS));
  // JSON everywhere; form bodies only where RFC 6749 wants them. Anything else is 415.
  fastify.removeContentTypeParser(['text/plain', 'application/json']);
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES },
    (request, body, done) => {
      // An unknown route is 404 whatever its body: nothing to parse.
      if (request.is404) return done(null, undefined);
      keepRawBody(request, body as Buffer);
      parseWithRoom(
        checks,
        request,
        body as Buffer,
        () => {
          assertReadable(request.headers);
          return jsonBody(body as Buffer, { findRepeatedKeys: isOAuthRequest(request) });
        },
        done,
      );
    },
  );
  fastify.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES },
    (request, body, done) => {
      if (request.is404) return done(null, undefined);
      if (!isOAuthRequest(request)) return done(unsupportedMediaType(), undefined);
      parseWithRoom(
        checks,
        request,
        body as Buffer,
        () => {
          assertReadable(request.headers);
          return formBody(body as Buffer);
        },
        done,
      );
    },
  );
  // Any other content type: an empty body is no body (CONTRACT §2), anything else 415.
  fastify.addContentTypeParser(
    '*',
    { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES },
    (_r, body, done) =>
      (body as Buffer).length === 0
        ? done(null, undefined)
        : done(unsupportedMediaType(), undefined),
  );

  const document = createApiDocument(app);
  // Under DOCS_PATH.
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
  });
  return app;
}

/**
 * Routes the Swagger module adds besides the page: `index.html` is a copy of the page whose
 * relative links (`./docs/…`) miss their files from there, and the init script's second path
 * is what those links ask for. Unknown, as any other path under DOCS_PATH.
 */
const UNSERVED_DOCS_ROUTES = new Set([
  `${DOCS_PATH}/index.html`,
  `${DOCS_PATH}/docs/swagger-ui-init.js`,
]);

function notFound(_request: FastifyRequest, reply: FastifyReply) {
  void reply.callNotFound();
}

/** What the Swagger UI page at DOCS_PATH loads from the docs' file server. */
const DOCS_PAGE_FILES = new Set([
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-32x32.png',
  'favicon-16x16.png',
]);

/**
 * The docs' file server finds only what the page loads: it would serve the whole
 * swagger-ui-dist folder (its package.json, source maps, a sample page pointing at a server
 * elsewhere).
 */
function onlyDocsPageFiles(request: FastifyRequest, reply: FastifyReply, done: () => void) {
  if (DOCS_PAGE_FILES.has((request.params as { '*': string })['*'])) return done();
  void reply.callNotFound();
}

/** A route parameter the URL leaves empty; the docs' wildcard (`/docs/`) may be. */
function hasEmptyParameter(request: FastifyRequest): boolean {
  const params = request.params as Record<string, string>;
  for (const name in params) if (params[name] === '' && name !== '*') return true;
  return false;
}

/** How often Node checks the headers and request timeouts. */
const checkingInterval = (env: AdapterSettings) => Math.min(1000, env.HTTP_HEADERS_TIMEOUT_MS);

/** How long a closing connection keeps reading what its client still sends (lingeringClose()). */
const LINGER_MS = 2000;

/**
 * Node's HTTP server closes a connection after its last answer with `socket.destroySoon()`: the
 * socket is destroyed as soon as the answer is written, and bytes the client is still sending
 * (the rest of a body the answer did not need) make the kernel reset the connection, which can
 * discard the answer before the client reads it. As web servers do ("lingering close"), the
 * sending side is shut once the answer is all written (as destroySoon() waits for it), and what
 * arrives is then read and dropped until the client closes its side, or for LINGER_MS at most.
 */
function lingeringClose(this: Socket): Socket {
  if (this.destroyed) return this;
  const linger = () => {
    if (this.readableEnded) return void this.destroy();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('end', () => this.destroy());
    this.once('close', () => clearTimeout(timer));
    this.resume();
  };
  if (this.writable) this.end();
  if (this.writableFinished) linger();
  else this.once('finish', linger);
  return this;
}

/**
 * Memory a body may take for each of its bytes once parsed and handled: JSON.parse makes 22 bytes
 * of heap of each byte of `[{},{},…]` (14 of `[[],[],…]`, 5 of numbers), the worst measured.
 */
const HANDLED_BYTES_PER_BODY_BYTE = 24;

/** The reply of a request whose body may need room (parseWithRoom()), which a parser is not given. */
const replies = new WeakMap<FastifyRequest, FastifyReply>();

/**
 * Before a body is read: the reply of one that may be large (declared so, or chunked) is kept for
 * its parser; then 100 Continue, if asked for.
 */
const beforeBody =
  (checks: BeforeBodyChecks) =>
  (
    request: FastifyRequest,
    reply: FastifyReply,
    payload: RequestPayload,
    done: (error: Error | null, payload?: RequestPayload) => void,
  ) => {
    const declared = Number(request.headers['content-length']) || 0;
    const chunked = request.headers['transfer-encoding'] !== undefined;
    if (chunked || processMemory.counts(declared * HANDLED_BYTES_PER_BODY_BYTE)) {
      replies.set(request, reply);
    }
    // A length over the route's limit is refused unread (413): nothing will arrive to count.
    if (
      chunked ||
      (declared >= COUNTED_FROM_BYTES &&
        declared <= (request.routeOptions.bodyLimit ?? BODY_LIMIT_BYTES))
    ) {
      payload = countedWhileArriving(checks, request, reply, payload);
    }
    continueOnRead(checks, request, reply, payload, done);
  };

/**
 * A body's bytes take room in `arrivingBodies` from the first, until its answer is made (or its
 * client leaves). Past that room the request is answered as soon as a chunk does not fit: the
 * route's refusal before its body if it has one (401, 403, 404), else 503; its connection then
 * closes, the rest of its body unread.
 */
function countedWhileArriving(
  checks: BeforeBodyChecks,
  request: FastifyRequest,
  reply: FastifyReply,
  payload: RequestPayload,
): RequestPayload {
  const { stream, release } = countArriving(payload, () => {
    reply.header('connection', 'close');
    return checks.assertPassed(request, reply).then(noRoomToArrive, (refusal: Error) => refusal);
  });
  releaseWhenAnswered(reply.raw, release);
  return stream;
}

/**
 * A body that has arrived, before it is parsed: a large one first takes room in the process's
 * memory budget. Without it, 200 senders of 1 MiB bodies at once took the heap to 4.5 GB
 * (docs/operations.md, "Tuning"). Room is taken once the body is here, so a client that declares
 * a large body and sends it slowly holds none, and what is refused without reading the body
 * (its encoding; the route's token, scope and resource checks: CONTRACT §2) is answered before
 * any wait for room. The room is given back when the answer is made (bodyAnswered()), not when
 * it leaves: a client that reads its answers slowly, or queues them behind others on its
 * connection, holds no room for a body that is done with.
 */
function parseWithRoom(
  checks: BeforeBodyChecks,
  request: FastifyRequest,
  body: Buffer,
  parse: () => unknown,
  done: (error: Error | null, body: unknown) => void,
) {
  const reply = replies.get(request);
  const bytes = body.length * HANDLED_BYTES_PER_BODY_BYTE;
  if (reply === undefined || !processMemory.counts(bytes)) return parseInto(parse, done);
  try {
    assertReadable(request.headers);
    assertUtf8(body);
  } catch (error) {
    return done(error as Error, undefined);
  }
  // A client that leaves while its body waits stops the wait: its body is dropped at once.
  const left = new AbortController();
  releaseWhenAnswered(reply.raw, () => left.abort(clientGone()));
  checks
    .assertPassed(request, reply)
    .then(() => processMemory.acquire(bytes, left.signal))
    .then(
      (release) =>
        // Parsed in turn, one large body per turn of the event loop (onePerTurn()).
        onePerTurn(() => {
          // Its client went away as room was granted or while it waited its turn (its close
          // not yet seen): nobody to answer, so nothing to parse or handle.
          if (request.raw.socket.destroyed) {
            release();
            return done(clientGone(), undefined);
          }
          // Held until the answer is made (bodyAnswered()), a refusal of the body included,
          // though the client leaves meanwhile: the handler holds the body until then.
          heldRoom.set(request, release);
          parseInto(parse, done);
        }),
      (refusal: Error) => done(refusal, undefined),
    );
}

/** The room a request's body holds in the memory budget (parseWithRoom()). */
const heldRoom = new WeakMap<FastifyRequest, Release>();

/**
 * Once a request's answer is made, its body is done with: dropped from the request (which lives
 * on until the answer has left) and its room given back.
 */
function bodyAnswered(
  request: FastifyRequest,
  _reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
) {
  const release = heldRoom.get(request);
  if (release !== undefined) {
    heldRoom.delete(request);
    request.body = undefined;
    (request as RawBodyRequest<FastifyRequest>).rawBody = undefined;
    release();
  }
  done(null, payload);
}

function parseInto(parse: () => unknown, done: (error: Error | null, body: unknown) => void) {
  let parsed: unknown;
  try {
    parsed = parse();
  } catch (error) {
    return done(error as Error, undefined);
  }
  done(null, parsed);
}

/**
 * 100 Continue to a client waiting for it (Expect: 100-continue), once its body is to be read:
 * after what the route decides before its body (BeforeBodyChecks: the token, the scope, a
 * signature's headers, the resource). A request refused there gets its answer instead of an
 * invitation to send a body nobody will read, and Node closes its connection after the answer.
 */
function continueOnRead(
  checks: BeforeBodyChecks,
  request: FastifyRequest,
  reply: FastifyReply,
  payload: RequestPayload,
  done: (error: Error | null, payload?: RequestPayload) => void,
) {
  // A declared length over the limit is answered 413 without reading (after those checks, by the
  // exception filter): no invitation to send it.
  if (
    request.headers.expect === undefined ||
    // Told already (the onRequest hook): nothing to read.
    !announcesBody(request) ||
    Number(request.headers['content-length']) > (request.routeOptions.bodyLimit ?? BODY_LIMIT_BYTES)
  ) {
    return done(null, payload);
  }
  checks.assertPassed(request, reply).then(
    () => {
      reply.raw.writeContinue();
      done(null, payload);
    },
    (refusal: Error) => done(refusal),
  );
}

/** Whether the request says a body follows (a length above 0, or chunks). */
function announcesBody(request: FastifyRequest): boolean {
  const { headers } = request;
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length']) > 0;
}

/** A route whose method carries a body Fastify reads (not GET or HEAD). */
function readsBody(method: RouteOptions['method']): boolean {
  return [method].flat().some((m) => m !== 'GET' && m !== 'HEAD');
}

function addRouteHook<Name extends 'onRequest' | 'preParsing' | 'onSend'>(
  route: RouteOptions,
  name: Name,
  hook: NonNullable<RouteOptions[Name]>,
) {
  route[name] = [route[name] ?? [], hook].flat() as RouteOptions[Name];
}

/** A body whose client left while it waited for room: answered to no one (and logged as 408). */
function clientGone(): Error {
  return Object.assign(new Error('The client left before its body was handled.'), {
    statusCode: 408,
  });
}

/** A body of a content type the route does not read (the exception filter words the 415). */
function unsupportedMediaType(): Error {
  return Object.assign(new Error('Unsupported Media Type'), { statusCode: 415 });
}
