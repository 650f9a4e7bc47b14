import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { logHttpLayerAnswer } from '../../logging/request-log.js';
import { asOAuthError, type ErrorAnswer, OAUTH_NO_STORE, OAUTH_ROUTE } from '../oauth-routes.js';

/**
 * Errors the HTTP layer answers before any route, guard or Nest filter runs (CONTRACT §2): a
 * malformed URL or request (400), a URL over 8 KiB (414), headers over 16 KiB (431), a request
 * that took too long (408). Same body shape as every other error, an `X-Request-Id`, and never
 * the URL echoed back (it may hold anything the caller sent).
 */
export const HTTP_LAYER_MESSAGES: Record<number, string> = {
  400: 'The request is malformed.',
  // No route (also a CONNECT, and anything but GET /metrics on the metrics port).
  404: 'Route not found.',
  408: 'The request took too long to arrive.',
  414: 'The request URL is too long.',
  417: 'The Expect header may only be 100-continue.',
  431: 'The request headers are too large.',
  // A request that arrives on a kept-alive connection while the service stops.
  503: 'The service is temporarily unavailable.',
};

/**
 * The HTTP layer's answer to a request for `url` (in origin form): the contract's shape, RFC
 * 6749's (with no-store) on the OAuth endpoints, as their other errors.
 */
function answerFor(
  url: string,
  status: number,
  message = HTTP_LAYER_MESSAGES[status],
): ErrorAnswer {
  const answer: ErrorAnswer = { status, body: { message }, headers: {} };
  if (!OAUTH_ROUTE.test(url)) return answer;
  return asOAuthError({ ...answer, headers: OAUTH_NO_STORE });
}

/** A caller's X-Request-Id that is echoed back: short, printable, no spaces. */
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The request's id: the caller's own X-Request-Id when it is a plausible one, else a new one. */
export function requestIdOf(raw: IncomingMessage): string {
  return callersId(raw.headers['x-request-id']) ?? randomUUID();
}

/** The caller's X-Request-Id value, when it is one to echo (Node joins a repeated one: not). */
function callersId(sent: string | string[] | undefined): string | undefined {
  return typeof sent === 'string' && REQUEST_ID.test(sent) ? sent : undefined;
}

/** A scheme and authority leading a request target in absolute form (`http://host/path`). */
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]+(?=[/?]|$)/i;

/**
 * The request target in origin form (`/oauth/token?x=1`): one in absolute form
 * (`http://host/oauth/token?x=1`), which a server must accept (RFC 9112 §3.2.2), without its
 * scheme and authority. Fastify's router finds the route of either, but every rule that reads
 * the path itself (the OAuth endpoints' error shape and form bodies, the docs' headers, the log
 * line) reads this one: Fastify's `rewriteUrl` sets it before routing, and the 417, answered
 * before Fastify, reads it too.
 */
export function originForm(target: string): string {
  if (target.charCodeAt(0) === 47) return target; // '/'
  const path = target.replace(ABSOLUTE_FORM, '');
  if (path === target) return target;
  return path.startsWith('/') ? path : `/${path}`;
}

/** The largest body a route reads unless it has a limit of its own; larger is 413. */
export const BODY_LIMIT_BYTES = 1024 * 1024;
/** The longest request target (path and query string) answered; longer is 414. */
export const URL_LIMIT_BYTES = 8 * 1024;
/** The most header bytes (names, values, separators) answered; more is 431. */
export const HEADERS_LIMIT_BYTES = 16 * 1024;
/**
 * Node's parser refuses a head (request line and headers together) over this size before any
 * request exists, without saying which part is too long (overflowStatus guesses). Well above the
 * two limits above, so that a head breaking only one of them is parsed and told apart exactly.
 */
export const PARSER_HEAD_LIMIT_BYTES = 64 * 1024;

/**
 * The status a request's head earns before anything else looks at the request, if any: an
 * HTTP/1.1 request without Host is malformed (RFC 9112 §3.2; Node's own check, turned off in
 * createAdapter, answers it with an empty body), then the two size limits, then one with more
 * than one Host (also RFC 9112 §3.2).
 */
export function headStatus(raw: FastifyRequest['raw']): 400 | 414 | 431 | undefined {
  if (raw.headers.host === undefined && raw.httpVersion === '1.1') return 400;
  // Node reads the URL and headers as latin1: one character per byte.
  if (raw.url !== undefined && raw.url.length > URL_LIMIT_BYTES) return 414;
  let size = 0;
  let hosts = 0;
  const fields = raw.rawHeaders;
  for (let i = 0; i < fields.length; i++) {
    size += fields[i].length + 2; // `: ` or CRLF
    if (i % 2 === 0 && fields[i].length === 4 && fields[i].toLowerCase() === 'host') hosts++;
  }
  if (size > HEADERS_LIMIT_BYTES) return 431;
  // RFC 9112 §3.2: more than one Host is a 400 (which one names the target is anyone's guess).
  return hosts > 1 ? 400 : undefined;
}

/**
 * Answers `status` from a request hook (a head headStatus() refuses, a request that arrives while
 * the service stops) in the contract's shape, RFC 6749's on the OAuth endpoints, and closes the
 * connection; the caller's hook stops there.
 */
export function refuseInHook(
  reply: FastifyReply,
  status: 400 | 414 | 431 | 503,
  headers: Record<string, string> = {},
) {
  const answer = answerFor(reply.request.url, status);
  void reply
    .code(answer.status)
    .headers({ ...answer.headers, ...headers, connection: 'close' })
    .send(answer.body);
}

/**
 * Fastify's `frameworkErrors`: router refusals, answered with the API's headers (and RFC 6749's
 * shape under /oauth/). No hook runs for them, so their log line is written here.
 */
export function frameworkErrors(headers: Record<string, string>) {
  return (error: { statusCode?: number }, request: FastifyRequest, reply: FastifyReply) => {
    const answer =
      error.statusCode === 414
        ? answerFor(request.url, 414)
        : answerFor(request.url, 400, 'The request URL is malformed.');
    void reply
      .headers({ ...headers, ...answer.headers })
      .header('x-request-id', request.id)
      .code(answer.status)
      .send(answer.body);
    logHttpLayerAnswer(request.server, request, answer.status);
  };
}

/**
 * Node's `checkExpectation` listener: an `Expect` other than 100-continue, which Node would
 * answer 417 itself with no body, id or headers. Answered in the contract's shape (RFC 6749's on
 * the OAuth endpoints) with `headers` (the API's security headers), and logged.
 */
export function expectationFailed(fastify: FastifyInstance, headers: Record<string, string>) {
  return (raw: IncomingMessage, response: ServerResponse) => {
    const id = requestIdOf(raw);
    // Before Fastify, so before its rewriteUrl: the target as sent.
    const answer = answerFor(originForm(raw.url ?? ''), 417);
    response.writeHead(answer.status, {
      ...headers,
      ...answer.headers,
      'content-type': 'application/json; charset=utf-8',
      'x-request-id': id,
      connection: 'close',
    });
    response.end(JSON.stringify(answer.body));
    logHttpLayerAnswer(fastify, { id, remoteAddress: raw.socket.remoteAddress }, 417);
  };
}

/** What Node's HTTP parser adds to the errors it reports. */
type ParserError = Error & { code?: string; rawPacket?: unknown; bytesParsed?: unknown };

/**
 * Fastify's `clientErrorHandler` (called on the Fastify instance): Node's parser refused what
 * the connection sent, so the answer is written to the socket, which is then closed, and logged.
 * Mostly no request exists yet (a malformed head: only the caller's address is known); one whose
 * body broke off (a FIN before its declared length) is under way, and the answer is its own: its
 * id (the caller's X-Request-Id echoed), its error shape, its one log line. Requests read before
 * the refused bytes (pipelined on the connection) are answered first, in order (RFC 9112 §9.3.2):
 * a webhook stored for one of them is acknowledged, not lost behind a 400.
 */
export function clientErrorHandler(this: FastifyInstance, error: ParserError, socket: Socket) {
  if (error.code === 'ECONNRESET' || socket.destroyed || refused.has(socket)) return;
  // Node's parser, once failed, reports again for any byte that arrives after.
  refused.add(socket);
  const status =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? overflowStatus(error)
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 408
        : 400;
  refuseAfterEarlierAnswers(this, socket, status, error);
}

/** Connections whose parser failed (clientErrorHandler()). */
const refused = new WeakSet<Socket>();

function refuseAfterEarlierAnswers(
  fastify: FastifyInstance,
  socket: Socket,
  status: number,
  error: ParserError,
) {
  if (socket.destroyed) return;
  // The response Node has given the socket: the oldest request on it not yet answered. Node gives
  // the socket to the next one (if any) once that one has finished, before its 'close'.
  const response = (socket as { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
  if (response?.req.complete && !response.closed) {
    // A request read whole before the refused bytes: its answer goes first, and those queued
    // behind it. (One whose client leaves closes too.)
    response.once('close', () => refuseAfterEarlierAnswers(fastify, socket, status, error));
    return;
  }
  if (response === undefined && answeredWhileArriving(socket)) {
    // The request whose body broke off (a FIN part-way, or stalled past the request timeout) was
    // answered before its body was read (401 for a missing bearer header, kept alive to read the
    // body past): it has its one answer, and a second would be read as the answer to the
    // client's next request. The connection just closes, gently (the answer may still be on its
    // way): the socket's destroySoon() is bootstrap's lingeringClose().
    socket.destroySoon();
    return;
  }
  if (socket.writable) {
    // A response not yet begun whose request is not whole: that request is the one refused.
    const underWay =
      response !== undefined && !response.headersSent && !response.req.complete
        ? response
        : undefined;
    const raw = underWay?.req;
    // The request under way has no answer or log line of its own: this is both, under its id.
    const head = raw ? { id: requestIdOf(raw), target: raw.url } : refusedHead(error);
    const id = head.id ?? randomUUID();
    const url = head.target === undefined ? undefined : originForm(head.target);
    const answer = answerFor(url ?? '/', status);
    socket.write(rawAnswer(status, answer.body, id, answer.headers));
    logHttpLayerAnswer(
      fastify,
      { id, remoteAddress: socket.remoteAddress, method: raw?.method, url, response: underWay },
      status,
    );
  }
  socket.destroy(error);
}

/**
 * Whether the request Node's parser was reading on `socket` when it failed is one whose body had
 * not all arrived and whose answer has already been made: no response is attached to the socket
 * (Node detaches a finished one), yet the parser's current message is incomplete.
 */
function answeredWhileArriving(socket: Socket): boolean {
  const reading = (socket as { parser?: { incoming?: IncomingMessage | null } | null }).parser
    ?.incoming;
  return reading !== undefined && reading !== null && !reading.complete;
}

/**
 * What can be read of a head Node's parser refused (Content-Length beside Transfer-Encoding, a
 * header line it cannot read…), when the bytes it was parsing hold it, as they mostly do: its
 * target (an OAuth endpoint answers in RFC 6749's shape) and the caller's X-Request-Id. A head
 * over PARSER_HEAD_LIMIT_BYTES is refused before it is read: nothing.
 */
function refusedHead({ code, rawPacket, bytesParsed }: ParserError): {
  id?: string;
  target?: string;
} {
  if (code === 'HPE_HEADER_OVERFLOW' || !Buffer.isBuffer(rawPacket)) return {};
  if (typeof bytesParsed !== 'number') return {};
  let head = rawPacket.toString('latin1', 0, bytesParsed);
  // The refused request's own head, after those before it on the connection.
  const before = head.lastIndexOf('\r\n\r\n', head.length - 5);
  if (before !== -1) head = head.slice(before + 4);
  const sent = [...head.matchAll(/\r\nx-request-id:[ \t]*([^\r\n]*?)[ \t]*(?=\r\n)/gi)];
  return {
    target: /^[A-Z]+ (\S+) HTTP\/1\.[01]\r\n/.exec(head)?.[1],
    id: callersId(sent.length === 1 ? sent[0][1] : sent.map((match) => match[1])),
  };
}

/**
 * Node's `connect` listener: a CONNECT request, which Node would answer by closing the
 * connection, with no status at all. This server is no proxy: 404 like any method and path it
 * has no route for, in the contract's shape with an id, and logged.
 */
export function connectRefused(fastify: FastifyInstance, headers: Record<string, string>) {
  return (raw: IncomingMessage, socket: Socket) => {
    const id = requestIdOf(raw);
    socket.end(rawAnswer(404, { message: HTTP_LAYER_MESSAGES[404] }, id, headers));
    logHttpLayerAnswer(fastify, { id, remoteAddress: socket.remoteAddress }, 404);
  };
}

/** A whole answer as bytes for a socket no response object owns; the connection then closes. */
function rawAnswer(
  status: number,
  body: Record<string, unknown>,
  id: string,
  headers: Record<string, string> = {},
): string {
  const text = JSON.stringify(body);
  const fields = {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'x-request-id': id,
    // An origin server with a clock sends Date on every 4xx (RFC 9110 §6.6.1), as Node does.
    date: new Date().toUTCString(),
    connection: 'close',
  };
  const head = Object.entries(fields).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head.join('')}\r\n${text}`;
}

/**
 * Which part of a head over PARSER_HEAD_LIMIT_BYTES is too long, from the bytes Node was parsing
 * when it gave up (`rawPacket`, up to `bytesParsed`): stopped right at the end of the URL (` HTTP/`
 * follows), or inside one run with no space or line break (a URL arriving in pieces), 414;
 * otherwise the headers, 431. A single header value with no space, over 64 KiB, arriving in
 * pieces looks the same as a URL and gets 414.
 */
function overflowStatus({ rawPacket, bytesParsed }: ParserError): 414 | 431 {
  if (!Buffer.isBuffer(rawPacket) || typeof bytesParsed !== 'number') return 431;
  if (rawPacket.toString('latin1', bytesParsed, bytesParsed + 6) === ' HTTP/') return 414;
  return /\s/.test(rawPacket.toString('latin1', 0, bytesParsed)) ? 431 : 414;
}
