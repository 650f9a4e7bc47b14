import { connect } from 'node:net';
import type { TestApp } from './app.js';

export interface RawResponse {
  status: number;
  /** The status line and headers, as sent. */
  head: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * One request written to a socket as given, read until the server closes the connection: for
 * requests an HTTP client would refuse or normalise (no Host, `%2e%2e` segments, a line Node's
 * parser rejects before any request object exists). Send `Connection: close` on requests the
 * server answers normally.
 */
export async function rawRequest(
  t: TestApp,
  request: string,
  { halfClose = false } = {},
): Promise<RawResponse> {
  const { port } = (t.http.listening ? t.http : t.http.listen(0)).address() as { port: number };
  const socket = connect(port, '127.0.0.1');
  // halfClose: the client shuts its sending side once the request is written (a FIN), as
  // `nc -N` and some HTTP/1.0 clients do, and still reads the answer.
  if (halfClose) socket.end(request);
  else socket.write(request);
  let data = '';
  for await (const chunk of socket) data += String(chunk);
  const end = data.indexOf('\r\n\r\n');
  const head = data.slice(0, end);
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = data.slice(end + 4);
  if (headers['transfer-encoding'] === 'chunked') body = unchunked(body);
  return { status: Number(head.split(' ')[1]), head, headers, body };
}

function unchunked(text: string): string {
  let body = '';
  for (let at = 0; ;) {
    const eol = text.indexOf('\r\n', at);
    const size = parseInt(text.slice(at, eol), 16);
    if (!size) return body;
    body += text.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}
