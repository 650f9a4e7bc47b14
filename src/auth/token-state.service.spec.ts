import { jest } from '@jest/globals';
import type { ConfigService } from '@nestjs/config';
import type { ClusterEvents, ClusterListener } from '../cluster/cluster-events.js';
import type { Environment } from '../config/environment.js';
import type { OAuthClient } from './oauth-client.entity.js';
import type { OAuthClientsRepository } from './oauth-clients.repository.js';
import type { RevokedToken } from './revoked-token.entity.js';
import type { RevokedTokensRepository } from './revoked-tokens.repository.js';
import { TokenStateService } from './token-state.service.js';

type ClientRow = Pick<OAuthClient, 'id' | 'disabled' | 'tokensNotBefore'>;

describe('TokenStateService (in-memory revocation state)', () => {
  const NOW = 1_800_000_000;
  let revokedRows: Pick<RevokedToken, 'jti' | 'expiresAt'>[];
  let clientRows: ClientRow[];
  let clientFinds: number;
  let clientLookups: number;
  let state: TokenStateService;
  /** When set, reading the clients waits until it is opened (to interleave a local change). */
  let gate: { opened: Promise<void>; open: () => void } | undefined;
  /** Stands in for the other instances: what this one published, and a way to tell it things. */
  let published: string[];
  let receive: ClusterListener;

  beforeEach(async () => {
    jest.useFakeTimers({ now: NOW * 1000 });
    revokedRows = [{ jti: 'old', expiresAt: NOW + 60 }];
    clientRows = [{ id: 'c1', disabled: false, tokensNotBefore: null }];
    clientFinds = 0;
    clientLookups = 0;
    gate = undefined;
    const revocations = {
      expiringAfter: async (seconds: number) => revokedRows.filter((r) => r.expiresAt > seconds),
      deleteExpiredBefore: async () => undefined,
      insertUnlessPresent: async (row: RevokedToken) => {
        revokedRows.push({ jti: row.jti, expiresAt: row.expiresAt });
      },
    } as unknown as RevokedTokensRepository;
    const clients = {
      states: async () => {
        clientFinds++;
        const snapshot = clientRows.map((c) => ({ ...c }));
        await gate?.opened;
        return snapshot;
      },
      stateOf: async (id: string) => {
        clientLookups++;
        return clientRows.find((c) => c.id === id) ?? null;
      },
    } as unknown as OAuthClientsRepository;
    const config = { get: () => 1000 } as unknown as ConfigService<Environment, true>;
    published = [];
    const events = {
      subscribe: (topic: string, listener: ClusterListener) => {
        if (topic === 'token-state') receive = listener;
      },
      publish: async (topic: string, message: string) => {
        if (topic === 'token-state') published.push(message);
      },
    } as unknown as ClusterEvents;
    state = new TokenStateService(revocations, clients, config, events);
    await state.onModuleInit();
  });

  afterEach(async () => {
    await state.onModuleDestroy();
    jest.useRealTimers();
  });

  const reload = async () => {
    await jest.advanceTimersByTimeAsync(1000);
  };

  it('loads revocations at start and picks up new ones on the periodic reload', async () => {
    expect(state.isRevoked('old')).toBe(true);
    expect(state.isRevoked('new')).toBe(false);
    revokedRows.push({ jti: 'new', expiresAt: NOW + 3600 });
    await reload();
    expect(state.isRevoked('new')).toBe(true);
  });

  it('drops an entry once its token has expired (plus the leeway)', async () => {
    jest.setSystemTime((NOW + 60 + 6) * 1000);
    await reload();
    expect(state.isRevoked('old')).toBe(false);
  });

  it('refuses tokens of a disabled client and tokens issued at or before tokens_not_before', async () => {
    expect(state.clientAccepts({ client_id: 'c1', iat: NOW })).toBe(true);
    clientRows[0] = { id: 'c1', disabled: false, tokensNotBefore: NOW };
    await reload();
    expect(state.clientAccepts({ client_id: 'c1', iat: NOW })).toBe(false);
    expect(state.clientAccepts({ client_id: 'c1', iat: NOW + 1 })).toBe(true);
    clientRows[0] = { id: 'c1', disabled: true, tokensNotBefore: NOW };
    await reload();
    expect(state.clientAccepts({ client_id: 'c1', iat: NOW + 1 })).toBe(false);
  });

  it('reads a client it has not seen once, then answers from memory', async () => {
    clientRows.push({ id: 'c2', disabled: false, tokensNotBefore: null });
    await expect(state.clientAccepts({ client_id: 'c2', iat: NOW })).resolves.toBe(true);
    expect(state.clientAccepts({ client_id: 'c2', iat: NOW })).toBe(true);
    await expect(state.clientAccepts({ client_id: 'gone', iat: NOW })).resolves.toBe(false);
    expect(state.clientAccepts({ client_id: 'gone', iat: NOW })).toBe(false);
    expect(clientLookups).toBe(2);
  });

  it('does not let a reload that raced with a local change undo it', async () => {
    let open!: () => void;
    gate = { opened: new Promise<void>((r) => (open = r)), open: () => open() };
    const finds = clientFinds;
    await jest.advanceTimersByTimeAsync(1000); // reload starts, reads the old row
    expect(clientFinds).toBe(finds + 1);
    await state.clientChanged({ id: 'c1', disabled: true, tokensNotBefore: NOW });
    gate.open();
    await jest.advanceTimersByTimeAsync(0);
    expect(state.clientAccepts({ client_id: 'c1', iat: NOW + 1 })).toBe(false);
  });

  it('tells the other instances about its own changes', async () => {
    await state.clientChanged({ id: 'c1', disabled: true, tokensNotBefore: NOW });
    await state.revoke({ jti: 'j1', exp: NOW + 60 } as never);
    expect(published.map((m) => JSON.parse(m) as unknown)).toEqual([
      { client: { id: 'c1', disabled: true, notBefore: NOW } },
      { revoked: { jti: 'j1', exp: NOW + 60 } },
    ]);
  });

  it('applies changes pushed by another instance at once, without reading the database', async () => {
    const finds = clientFinds;
    await receive(JSON.stringify({ revoked: { jti: 'pushed', exp: NOW + 60 } }));
    await receive(JSON.stringify({ client: { id: 'c1', disabled: true, notBefore: NOW } }));
    expect(state.isRevoked('pushed')).toBe(true);
    expect(state.clientAccepts({ client_id: 'c1', iat: NOW + 1 })).toBe(false);
    expect(clientFinds).toBe(finds);
  });

  it('reloads when messages may have been missed (a channel was re-established)', async () => {
    revokedRows.push({ jti: 'missed', expiresAt: NOW + 3600 });
    await receive(null);
    expect(state.isRevoked('missed')).toBe(true);
  });
});
