import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ClusterEvents } from '../cluster/cluster-events.js';
import type { Environment } from '../config/environment.js';
import { CLOCK_LEEWAY_SECONDS, type AccessTokenClaims } from './access-tokens.service.js';
import { OAuthClient } from './oauth-client.entity.js';
import { OAuthClientsRepository } from './oauth-clients.repository.js';
import { RevokedTokensRepository } from './revoked-tokens.repository.js';

interface ClientState {
  disabled: boolean;
  /** Epoch seconds; tokens issued at or before it are refused. */
  notBefore: number | null;
}

/** What one instance tells the others (ClusterEvents' 'token-state' topic). */
type TokenStateChange =
  | { revoked: { jti: string; exp: number } }
  | { client: { id: string; disabled: boolean; notBefore: number | null } };

const CLEANUP_EVERY_MS = 60_000;
const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * What can make a correctly signed token unacceptable: its revocation, its client's disabling or
 * the client's `tokens_not_before`. Kept in memory so that checking a request never touches the
 * database; loaded at start and changed at once by this instance's own revocations. Changes made
 * by another instance (or the CLI) are pushed through ClusterEvents (within 1 s on PostgreSQL or
 * Redis), and the state is reloaded every REVOCATION_REFRESH_MS all the same: the safety net for a
 * lost message, and the only way on SQLite.
 */
@Injectable()
export class TokenStateService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(TokenStateService.name);
  /** jti → exp (epoch seconds). Revocations are never undone, so a reload only adds. */
  private readonly revoked = new Map<string, number>();
  /** null: no such client (remembered until the next reload). */
  private clients = new Map<string, ClientState | null>();
  private readonly lookups = new Map<string, Promise<ClientState | null>>();
  /** Bumped by every local change, so a reload that raced with one does not undo it. */
  private localChanges = 0;
  private timer?: NodeJS.Timeout;
  private reloading?: Promise<void>;
  private lastCleanup = 0;

  constructor(
    private readonly revocations: RevokedTokensRepository,
    private readonly clientRows: OAuthClientsRepository,
    private readonly config: ConfigService<Environment, true>,
    private readonly events: ClusterEvents,
  ) {}

  async onModuleInit() {
    this.events.subscribe('token-state', (message) => this.receive(message));
    await this.reload();
    this.lastCleanup = Date.now();
    const every = this.config.get('REVOCATION_REFRESH_MS', { infer: true });
    this.timer = setInterval(() => void this.tick(), every);
    this.timer.unref();
  }

  async onModuleDestroy() {
    clearInterval(this.timer);
    await this.reloading;
  }

  isRevoked(jti: string): boolean {
    return this.revoked.has(jti);
  }

  /**
   * Whether the token's client still accepts it. Synchronous from memory; a Promise only for a
   * client this instance has not seen yet (created elsewhere since the last reload): that one is
   * read from the database once and remembered.
   */
  clientAccepts(claims: Pick<AccessTokenClaims, 'client_id' | 'iat'>): boolean | Promise<boolean> {
    const state = this.clients.get(claims.client_id);
    if (state !== undefined) return accepts(state, claims.iat);
    return this.lookUp(claims.client_id).then((found) => accepts(found, claims.iat));
  }

  /** Records a revocation durably, then refuses the token here at once. */
  async revoke(claims: AccessTokenClaims): Promise<void> {
    await this.revocations.insertUnlessPresent({
      jti: claims.jti,
      clientId: claims.client_id,
      expiresAt: claims.exp,
      revokedAt: Date.now(),
    });
    const revoked = { jti: claims.jti, exp: claims.exp };
    this.revoked.set(revoked.jti, revoked.exp);
    await this.tell({ revoked });
  }

  /** Called after a client row changed (created, disabled) on this instance. */
  async clientChanged(client: Pick<OAuthClient, 'id' | 'disabled' | 'tokensNotBefore'>) {
    const change = { id: client.id, disabled: client.disabled, notBefore: client.tokensNotBefore };
    this.apply({ client: change });
    await this.tell({ client: change });
  }

  private tell(change: TokenStateChange) {
    return this.events.publish('token-state', JSON.stringify(change));
  }

  /** Another instance's change (or our own, echoed); null: messages may have been missed. */
  private async receive(message: string | null) {
    if (message === null) return this.tick();
    this.apply(JSON.parse(message) as TokenStateChange);
  }

  private apply(change: TokenStateChange) {
    if ('revoked' in change) {
      this.revoked.set(change.revoked.jti, change.revoked.exp);
      return;
    }
    const { id, disabled, notBefore } = change.client;
    this.localChanges++;
    this.clients.set(id, { disabled, notBefore });
  }

  private async tick() {
    if (this.reloading) return;
    try {
      await this.reload();
      if (Date.now() - this.lastCleanup >= CLEANUP_EVERY_MS) {
        this.lastCleanup = Date.now();
        await this.revocations.deleteExpiredBefore(nowSeconds() - CLOCK_LEEWAY_SECONDS);
      }
    } catch (error) {
      // Keep serving with the last known state; the next tick tries again.
      this.logger.warn({ err: error }, 'could not reload the token revocation state');
    }
  }

  private reload(): Promise<void> {
    this.reloading ??= this.load().finally(() => (this.reloading = undefined));
    return this.reloading;
  }

  private async load() {
    const changesBefore = this.localChanges;
    const now = nowSeconds();
    const [rows, clients] = await Promise.all([
      this.revocations.expiringAfter(now - CLOCK_LEEWAY_SECONDS),
      this.clientRows.states(),
    ]);
    for (const row of rows) this.revoked.set(row.jti, row.expiresAt);
    // Entries expire with their tokens: an expired token is refused by its `exp` anyway.
    for (const [jti, exp] of this.revoked) {
      if (exp + CLOCK_LEEWAY_SECONDS < now) this.revoked.delete(jti);
    }
    if (this.localChanges === changesBefore) {
      this.clients = new Map(
        clients.map((c) => [c.id, { disabled: c.disabled, notBefore: c.tokensNotBefore }]),
      );
    }
  }

  private lookUp(clientId: string): Promise<ClientState | null> {
    let pending = this.lookups.get(clientId);
    if (!pending) {
      pending = this.clientRows
        .stateOf(clientId)
        .then((row) => {
          const state = row ? { disabled: row.disabled, notBefore: row.tokensNotBefore } : null;
          this.clients.set(clientId, state);
          return state;
        })
        .finally(() => this.lookups.delete(clientId));
      this.lookups.set(clientId, pending);
    }
    return pending;
  }
}

function accepts(state: ClientState | null, issuedAt: number): boolean {
  if (!state || state.disabled) return false;
  return state.notBefore === null || issuedAt > state.notBefore;
}
