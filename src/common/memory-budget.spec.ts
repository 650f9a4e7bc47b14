import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { jest } from '@jest/globals';
import { ServiceUnavailableApiException } from './exceptions/api.exception.js';
import { MemoryBudget, releaseWhenAnswered } from './memory-budget.js';

describe('MemoryBudget', () => {
  let memory: MemoryBudget;
  beforeEach(() => {
    jest.useFakeTimers();
    memory = new MemoryBudget(100);
  });
  afterEach(() => jest.useRealTimers());

  const settled = async <T>(promise: Promise<T>) => {
    let state: 'pending' | 'granted' | 'refused' = 'pending';
    promise.then(
      () => (state = 'granted'),
      () => (state = 'refused'),
    );
    await Promise.resolve();
    await Promise.resolve();
    return () => state;
  };

  it('grants what fits at once, then makes the rest wait in turn until room is given back', async () => {
    const first = await memory.acquire(60);
    const second = await settled(memory.acquire(50));
    const third = await settled(memory.acquire(10));
    // The third would fit, but does not overtake the second.
    expect([second(), third(), memory.held]).toEqual(['pending', 'pending', 60]);
    first();
    await Promise.resolve();
    await Promise.resolve();
    expect([second(), third(), memory.held]).toEqual(['granted', 'granted', 60]);
  });

  it('tryAcquire() takes what fits at once and nothing else, never waiting or overtaking', async () => {
    const first = memory.tryAcquire(60)!;
    expect([memory.tryAcquire(50), memory.held]).toEqual([undefined, 60]);
    const waiting = await settled(memory.acquire(50));
    // Room for 10 is there, but one waits ahead of it.
    expect([memory.tryAcquire(10), waiting()]).toEqual([undefined, 'pending']);
    first();
    await Promise.resolve();
    expect([waiting(), memory.held]).toEqual(['granted', 50]);
  });

  it('gives room back once, however often release is called', async () => {
    const release = await memory.acquire(40);
    release();
    release();
    expect(memory.held).toBe(0);
  });

  it('serves a page larger than the whole budget when it is alone', async () => {
    const release = await memory.acquire(1000);
    expect(memory.held).toBe(1000);
    const next = await settled(memory.acquire(1));
    expect(next()).toBe('pending');
    release();
    await Promise.resolve();
    await Promise.resolve();
    expect(next()).toBe('granted');
  });

  it('refuses with 503 a page that waited WAIT_MS, and lets the next one in line through', async () => {
    await memory.acquire(90);
    const big = memory.acquire(50);
    const refused = big.catch((error: unknown) => error);
    const small = await settled(memory.acquire(10));
    expect(small()).toBe('pending');
    jest.advanceTimersByTime(MemoryBudget.WAIT_MS);
    const error = await refused;
    expect(error).toBeInstanceOf(ServiceUnavailableApiException);
    expect((error as ServiceUnavailableApiException).status).toBe(503);
    await Promise.resolve();
    expect(small()).toBe('granted');
    expect(memory.held).toBe(100);
  });
  it('stops the wait of one whose signal is aborted (its client left), and lets the next one in line through', async () => {
    await memory.acquire(90);
    const left = new AbortController();
    const gone = new Error('gone');
    const big = memory.acquire(50, left.signal).catch((error: unknown) => error);
    const small = await settled(memory.acquire(10));
    expect(small()).toBe('pending');
    left.abort(gone);
    expect(await big).toBe(gone);
    await Promise.resolve();
    expect(small()).toBe('granted');
    expect(memory.held).toBe(100);
    // Already aborted: refused at once, nothing taken.
    expect(await memory.acquire(1, left.signal).catch((error: unknown) => error)).toBe(gone);
    expect(memory.held).toBe(100);
  });
});

describe('releaseWhenAnswered', () => {
  it('gives back the room of a pipelined request whose connection closed while its answer was queued', async () => {
    // The first request is never answered; the second's answer waits behind it, and that
    // response object gets no `close` of its own when the client goes away.
    const released: string[] = [];
    const arrived: ServerResponse[] = [];
    const server = createServer((req, res) => {
      arrived.push(res);
      releaseWhenAnswered(res, () => released.push(req.url!));
      // The budget's release does nothing when called again; counted here as a set.
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write('GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\n\r\n');
      await until(() => arrived.length === 2);
      socket.destroy();
      await until(() => new Set(released).size === 2);
      expect([...new Set(released)].sort()).toEqual(['/first', '/second']);
    } finally {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
  });

  it('watches a connection with one listener however many of its requests hold room', async () => {
    const released: string[] = [];
    const arrived: ServerResponse[] = [];
    const server = createServer((req, res) => {
      arrived.push(res);
      releaseWhenAnswered(res, () => released.push(req.url!));
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    try {
      const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
      socket.on('error', () => undefined);
      // Node hands the server pipelined requests one at a time unless each is answered; answer
      // each as it comes, so that all 20 pass through releaseWhenAnswered() on one connection.
      const heads = Array.from({ length: 20 }, (_, i) => `GET /${i} HTTP/1.1\r\nHost: x\r\n\r\n`);
      socket.write(heads.join(''));
      const listeners: number[] = [];
      let answered = 0;
      while (answered < 20) {
        await until(() => arrived.length > answered);
        listeners.push(arrived[answered].req.socket.listenerCount('close'));
        arrived[answered].end('ok');
        answered++;
      }
      await until(() => released.length === 20);
      // Node's own listeners plus ours, the same for the 20th request as for the first.
      expect(new Set(listeners).size).toBe(1);
      expect(released).toEqual(Array.from({ length: 20 }, (_, i) => `/${i}`));
      socket.destroy();
    } finally {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
  });

  it('gives back at once when the connection is already gone', () => {
    const released: number[] = [];
    const response = { closed: false, req: { socket: { destroyed: true } } } as ServerResponse;
    releaseWhenAnswered(response, () => released.push(1));
    expect(released).toEqual([1]);
  });
});

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
}
