// The practical ceiling for one Node process here: raw node:http, same URL and JSON body as
// scenario (a), no auth, no database. Runs in its own process so it does not share a thread
// with the load generator.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';

export async function freePort() {
  const server = createNetServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  return port;
}

export async function startBaseline(port) {
  const child = fork(new URL(import.meta.url).pathname, ['serve', String(port)], {
    stdio: 'inherit',
  });
  await once(child, 'message');
  return { pid: child.pid, base: `http://127.0.0.1:${port}`, close: () => child.kill('SIGTERM') };
}

if (process.argv[2] === 'serve') {
  const body = JSON.stringify({ data: { name: 'Acme Ltd', type: 'limited-company' } });
  createServer((req, res) => {
    if (req.url === '/v2/customers/1/company') {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(body);
    } else {
      res.writeHead(404).end();
    }
  }).listen(Number(process.argv[3]), '127.0.0.1', () => process.send('ready'));
}
