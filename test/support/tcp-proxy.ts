import { once } from 'node:events';
import { createServer, connect, Server, Socket } from 'node:net';

/**
 * A TCP proxy in front of a real server, for fault tests: `cut()` drops every connection and
 * refuses new ones, `restore()` accepts again on the same port; `stall()` keeps every connection
 * open but forwards nothing (a database that stopped answering), `unstall()` forwards again.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private readonly pairs = new Set<[Socket, Socket]>();
  private stalled = false;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(port = 0): Promise<this> {
    this.server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      const pair: [Socket, Socket] = [client, upstream];
      this.pairs.add(pair);
      if (this.stalled) halt(pair);
      else forward(pair);
      client.on('close', () => {
        this.pairs.delete(pair);
        upstream.destroy();
      });
      upstream.on('close', () => client.destroy());
    });
    this.server.listen(port, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  async cut(): Promise<void> {
    const closed = this.server?.listening ? once(this.server, 'close') : Promise.resolve();
    this.server?.close();
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  stall(): void {
    this.stalled = true;
    for (const pair of this.pairs) halt(pair);
  }

  unstall(): void {
    this.stalled = false;
    for (const pair of this.pairs) forward(pair);
  }

  async restore(): Promise<void> {
    if (!this.server?.listening) await this.start(this.port);
  }
}

function forward([client, upstream]: [Socket, Socket]) {
  client.pipe(upstream);
  upstream.pipe(client);
  client.resume();
  upstream.resume();
}

function halt([client, upstream]: [Socket, Socket]) {
  client.unpipe(upstream);
  upstream.unpipe(client);
  client.pause();
  upstream.pause();
}
