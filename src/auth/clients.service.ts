import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { randomUUID } from 'node:crypto';
import type { Environment } from '../config/environment.js';
import { FixedWindowLimiter } from './fixed-window-limiter.js';
import type { GrantType } from './grant-types.js';
import { OAuthClient } from './oauth-client.entity.js';
import { OAuthClientsRepository } from './oauth-clients.repository.js';
import type { ClientCredentials } from './oauth-request.js';
import {
  ClientNotFoundException,
  InvalidClientException,
  TooManyAttemptsException,
} from './oauth.exceptions.js';
import type { Scope } from './scopes.js';
import { generateClientSecret, hashClientSecret, verifyClientSecret } from './secret-hash.js';
import { TokenStateService } from './token-state.service.js';
import { TokenVerifier } from './token-verifier.service.js';

export interface NewClient {
  name: string;
  scopes: Scope[];
  grants: GrantType[];
}

// Client ids are UUIDs; anything else cannot name a client and never reaches the database
// (a NUL byte, for one, would make PostgreSQL fail the query).
const PLAUSIBLE_ID = /^[\x21-\x7e]{1,64}$/;

@Injectable()
export class ClientsService {
  private readonly failures: FixedWindowLimiter;

  constructor(
    private readonly clients: OAuthClientsRepository,
    private readonly state: TokenStateService,
    private readonly verifier: TokenVerifier,
    config: ConfigService<Environment, true>,
  ) {
    this.failures = new FixedWindowLimiter(
      config.get('THROTTLE_TOKEN_FAILURES_PER_CLIENT', { infer: true }),
    );
  }

  /** Registers a client; the secret is returned here once and stored only as a hash. */
  async create(input: NewClient): Promise<{ clientId: string; clientSecret: string }> {
    const clientSecret = generateClientSecret();
    const client = Object.assign(new OAuthClient(), {
      id: randomUUID(),
      name: input.name,
      secretHash: hashClientSecret(clientSecret),
      grants: [...new Set(input.grants)],
      scopes: [...new Set(input.scopes)],
      disabled: false,
      tokensNotBefore: null,
      createdAt: Date.now(),
    });
    await this.clients.insert(client);
    this.state.clientChanged(client);
    return { clientId: client.id, clientSecret };
  }

  /** Refuses the client from now on, and with it every token it was ever issued. */
  async disable(clientId: string): Promise<{ clientId: string; tokensNotBefore: number }> {
    const client = PLAUSIBLE_ID.test(clientId) ? await this.clients.findById(clientId) : null;
    if (!client) throw new ClientNotFoundException();
    client.disabled = true;
    client.tokensNotBefore = Math.floor(Date.now() / 1000);
    await this.clients.disable(client.id, client.tokensNotBefore);
    this.state.clientChanged(client);
    this.verifier.forgetClient(client.id);
    return { clientId: client.id, tokensNotBefore: client.tokensNotBefore };
  }

  /**
   * The client, when the credentials are right and it is enabled; otherwise one answer for every
   * case, after the same work. Failures count against the client id and, past the limit, the
   * client id is refused (429) without looking at the secret until the minute is over.
   */
  async authenticate(credentials: ClientCredentials): Promise<OAuthClient> {
    const { clientId, clientSecret, usedBasic } = credentials;
    const retryAfter = this.failures.retryAfter(clientId);
    if (retryAfter > 0) throw new TooManyAttemptsException(retryAfter);

    const client = PLAUSIBLE_ID.test(clientId) ? await this.clients.findById(clientId) : null;
    const secretMatches = verifyClientSecret(clientSecret, client?.secretHash);
    if (!client || !secretMatches || client.disabled) {
      // Checked again after the await: in a concurrent burst, attempts past the limit that were
      // already in flight are answered 429 too, so no more than the limit ever get a verdict.
      const late = this.failures.retryAfter(clientId);
      this.failures.record(clientId);
      if (late > 0) throw new TooManyAttemptsException(late);
      throw new InvalidClientException(usedBasic);
    }
    return client;
  }
}
