import { jest } from '@jest/globals';
import type { ConfigService } from '@nestjs/config';
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
    state = new TokenStateService(revocations, clients, config);
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
    state.clientChanged({ id: 'c1', disabled: true, tokensNotBefore: NOW });
    gate.open();
    await jest.advanceTimersByTimeAsync(0);
    expect(state.clientAccepts({ client_id: 'c1', iat: NOW + 1 })).toBe(false);
  });
});
