import type { FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Errors the HTTP layer answers before any route, hook or Nest filter runs (CONTRACT §2): a
 * malformed URL (400), an over-long path parameter (414), oversized headers (431), a request that
 * cannot be parsed (400) or that took too long (408). Same body shape as every other error, an
 * `X-Request-Id`, and never the URL echoed back (it may hold anything the caller sent).
 */
const MESSAGES: Record<number, string> = {
  400: 'The request is malformed.',
  408: 'The request took too long to arrive.',
  414: 'The request URL is too long.',
  431: 'The request headers are too large.',
};

/** Fastify's `frameworkErrors`: router refusals, answered with the API's headers. */
export function frameworkErrors(headers: Record<string, string>) {
  return (error: { statusCode?: number }, request: FastifyRequest, reply: FastifyReply) => {
    const status = error.statusCode === 414 ? 414 : 400;
    void reply
      .headers(headers)
      .header('x-request-id', request.id)
      .code(status)
      .send({ message: status === 414 ? MESSAGES[414] : 'The request URL is malformed.' });
  };
}

/**
 * Fastify's `clientErrorHandler`: Node's parser refused the request (no request object exists),
 * so the answer is written to the socket, which is then closed.
 */
export const clientErrorHandler: FastifyServerOptions['clientErrorHandler'] = (
  error: Error & { code?: string },
  socket: Socket,
) => {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const status =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 431
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 408
        : error.code === 'HPE_URI_TOO_LONG'
          ? 414
          : 400;
  const body = JSON.stringify({ message: MESSAGES[status] });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${randomUUID()}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy(error);
};
