import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { BeforeBodyChecks } from '../before-body-checks.js';
import {
  ApiException,
  RefusedInputException,
  ServiceUnavailableApiException,
} from '../exceptions/api.exception.js';
import { isDatabaseUnavailable } from '../exceptions/database-errors.js';
import { asOAuthError, type ErrorAnswer, isOAuthRequest, OAUTH_NO_STORE } from '../oauth-routes.js';
import { BodyParseError } from '../parsers/body-parsers.js';
import { BODY_LIMIT_BYTES, HTTP_LAYER_MESSAGES } from './http-layer-errors.js';

const DEFAULT_MESSAGES: Record<number, string> = {
  400: 'The request body is malformed: it is not valid JSON.',
  401: 'Unauthenticated.',
  403: 'This action is forbidden.',
  404: HTTP_LAYER_MESSAGES[404],
  405: 'Method not allowed.',
  // Node's request timeout, answered by the HTTP layer's own words.
  408: HTTP_LAYER_MESSAGES[408],
  // The docs' file server: a failed If-Match or If-Unmodified-Since, a range past the end.
  412: 'A precondition in the request headers does not hold.',
  415: 'The request body must be JSON (Content-Type: application/json).',
  416: 'The requested range is not within the file.',
  422: 'The given data was invalid.',
  429: 'Too many requests.',
  500: 'Internal server error.',
  503: HTTP_LAYER_MESSAGES[503],
};

/**
 * A 413's message names the limit of the route that refused the body: its own (16 KiB at the
 * OAuth endpoints and OPTIONS), else BODY_LIMIT_BYTES (a route without a limit of its own has
 * none in its options).
 */
function tooLarge(routeLimit: number | null | undefined): string {
  const limit = routeLimit ?? BODY_LIMIT_BYTES;
  const size = limit % 2 ** 20 === 0 ? `${limit / 2 ** 20} MiB` : `${limit / 1024} KiB`;
  return `The request body is larger than ${size}.`;
}

/** Statuses of a body Fastify refused before the route ran (parsing, size, content type). */
const BODY_REFUSALS = [400, 413, 415];

/**
 * Owns every error body the service sends (docs/contract.md §2). Domain errors render themselves;
 * framework and parser errors are mapped by status; anything else is a logged, opaque 500.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('ExceptionsFilter');

  constructor(private readonly beforeBody: BeforeBodyChecks) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const ctx = host.switchToHttp();
    const request = ctx.getRequest<FastifyRequest>();
    const reply = ctx.getResponse<FastifyReply>();

    const rendered = this.render(exception, request);
    // Fastify refused the body before the route ran, or the service refused the input (an
    // invalid body or query: RefusedInputException).
    const refusedBody =
      exception instanceof RefusedInputException ||
      (!(exception instanceof ApiException) && BODY_REFUSALS.includes(rendered.status));
    // Fastify parses the body before it knows the route is unknown; the route answers first.
    if (refusedBody && !request.routeOptions?.url) {
      return this.send(exception, reply, request, plain(404));
    }
    // …and before the route's guard (token 401, scope 403: @RequireScopes()) and resource
    // (404: @ResourceBeforeBody()), which answer first, in that order.
    if (refusedBody && this.beforeBody.apply(request)) {
      void this.beforeBody.assertPassed(request, reply).then(
        () => this.send(exception, reply, request, rendered),
        (refusal: unknown) => this.send(refusal, reply, request, this.render(refusal, request)),
      );
      return;
    }
    this.send(exception, reply, request, rendered);
  }

  private send(
    exception: unknown,
    reply: FastifyReply,
    request: FastifyRequest,
    rendered: ErrorAnswer,
  ) {
    if (isOAuthRequest(request)) {
      // The service's own errors render themselves (the OAuth ones in RFC 6749's shape), except
      // a refused input (the OAuth DTOs' 422, a poisoned query), answered as invalid_request, and
      // the memory budget's 503, as temporarily_unavailable.
      if (
        !(exception instanceof ApiException) ||
        exception instanceof RefusedInputException ||
        exception instanceof ServiceUnavailableApiException
      ) {
        rendered = asOAuthError(rendered);
      }
      rendered = { ...rendered, headers: { ...rendered.headers, ...OAUTH_NO_STORE } };
    }
    if (reply.sent) return;
    if (rendered.status === 429 && reply.getHeader('retry-after') !== undefined) {
      delete rendered.headers['Retry-After'];
    }
    // Every 503, whoever raised it (a database away, a readiness check, a signing secret that
    // cannot be read): try again in a second.
    if (rendered.status === 503 && rendered.headers['Retry-After'] === undefined) {
      rendered = { ...rendered, headers: { ...rendered.headers, 'Retry-After': '1' } };
    }
    reply.headers(rendered.headers).code(rendered.status).send(rendered.body);
  }

  private render(exception: unknown, request: FastifyRequest): ErrorAnswer {
    const answer = this.renderAny(exception, request);
    return answer.status === 413
      ? { ...answer, body: { message: tooLarge(request.routeOptions?.bodyLimit) } }
      : answer;
  }

  private renderAny(exception: unknown, request: FastifyRequest): ErrorAnswer {
    if (exception instanceof ApiException) {
      return { status: exception.status, body: exception.body(), headers: exception.headers };
    }
    if (exception instanceof HttpException) {
      const status = fromFileServer403(exception) ? 404 : exception.getStatus();
      if (status >= 500) this.logUnexpected(exception, request);
      return plain(status, status === 429 ? { 'Retry-After': '60' } : fileLength(exception));
    }
    const statusCode = (exception as { statusCode?: unknown })?.statusCode;
    if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
      // Fastify's own errors: body parsing, content type, body size.
      return exception instanceof BodyParseError
        ? { status: exception.statusCode, body: { message: exception.message }, headers: {} }
        : plain(statusCode, fileLength(exception));
    }
    if (isDatabaseUnavailable(exception)) {
      this.logger.warn({ err: exception, reqId: request.id }, 'database unavailable');
      return plain(503);
    }
    this.logUnexpected(exception, request);
    return plain(500);
  }

  private logUnexpected(exception: unknown, request: FastifyRequest) {
    this.logger.error({ err: exception, reqId: request.id }, 'unhandled error');
  }
}

/**
 * The docs' file server refuses a path holding `..`, `%00` or a backslash with 403 (Nest wraps
 * Fastify's errors in an HttpException, the original as `cause`). No such page: 404, since 403
 * is only for a token without the scope (docs/contract.md §2).
 */
function fromFileServer403(exception: HttpException): boolean {
  const cause = exception.cause as { statusCode?: unknown } | undefined;
  return exception.getStatus() === 403 && typeof cause?.statusCode === 'number';
}

/**
 * The docs' file server's 416 carries `Content-Range` with the file's length, so that a client
 * can ask again within the file (RFC 9110 §15.5.17); the error body is ours, that header is kept.
 */
function fileLength(exception: unknown): Record<string, string> {
  const error = exception instanceof HttpException ? exception.cause : exception;
  const range = (error as { headers?: Record<string, unknown> } | undefined)?.headers?.[
    'Content-Range'
  ];
  return typeof range === 'string' ? { 'Content-Range': range } : {};
}

function plain(status: number, headers: Record<string, string> = {}): ErrorAnswer {
  const message = DEFAULT_MESSAGES[status] ?? (status >= 500 ? DEFAULT_MESSAGES[500] : 'Error.');
  return { status, body: { message }, headers };
}
