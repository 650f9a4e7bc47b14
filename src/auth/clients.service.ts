import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { GrantType } from './grant-types.js';
import { OAuthClient } from './oauth-client.entity.js';
import { OAuthClientsRepository } from './oauth-clients.repository.js';
import type { ClientCredentials } from './oauth-request.js';
import { ClientNotFoundException, InvalidClientException } from './oauth.exceptions.js';
import type { Scope } from './scopes.js';
import { ClientSecretHasher, generateClientSecret } from './secret-hash.js';
import { ThrottlingService } from './throttling.service.js';
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
  /** Authenticated in place of a client that does not exist: disabled, and its hash a stand-in. */
  private readonly unknownClient: OAuthClient;

  constructor(
    private readonly clients: OAuthClientsRepository,
    private readonly state: TokenStateService,
    private readonly verifier: TokenVerifier,
    private readonly throttling: ThrottlingService,
    private readonly secrets: ClientSecretHasher,
  ) {
    this.unknownClient = Object.assign(new OAuthClient(), {
      id: '00000000-0000-4000-8000-000000000000',
      name: 'unknown client',
      secretHash: secrets.unknownClientHash,
      grants: ['client_credentials'],
      scopes: ['customers:read'],
      disabled: true,
      tokensNotBefore: null,
      createdAt: 0,
    });
  }

  /** Registers a client; the secret is returned here once and stored only as a hash. */
  async create(input: NewClient): Promise<{ clientId: string; clientSecret: string }> {
    const clientSecret = generateClientSecret();
    const client = Object.assign(new OAuthClient(), {
      id: randomUUID(),
      name: input.name,
      secretHash: this.secrets.hash(clientSecret),
      grants: [...new Set(input.grants)],
      scopes: [...new Set(input.scopes)],
      disabled: false,
      tokensNotBefore: null,
      createdAt: Date.now(),
    });
    await this.clients.insert(client);
    await this.state.clientChanged(client);
    return { clientId: client.id, clientSecret };
  }

  /** Throws ClientNotFoundException unless the client is registered (disabled or not). */
  async assertExists(clientId: string): Promise<void> {
    const found = PLAUSIBLE_ID.test(clientId) && (await this.clients.stateOf(clientId));
    if (!found) throw new ClientNotFoundException();
  }

  /** Refuses the client from now on, and with it every token it was ever issued. */
  async disable(clientId: string): Promise<{ clientId: string; tokensNotBefore: number }> {
    const client = PLAUSIBLE_ID.test(clientId) ? await this.clients.findById(clientId) : null;
    if (!client) throw new ClientNotFoundException();
    client.disabled = true;
    client.tokensNotBefore = Math.floor(Date.now() / 1000);
    await this.clients.disable(client.id, client.tokensNotBefore);
    await this.state.clientChanged(client);
    this.verifier.forgetClient(client.id);
    return { clientId: client.id, tokensNotBefore: client.tokensNotBefore };
  }

  /**
   * The client, when the credentials are right and it is enabled; otherwise one answer for every
   * case, after the same work: an unknown id gets a stand-in client, read and checked as a real
   * one is (docs/contract.md §3: "in about the same time"). Failures count against the client id
   * from that address and, past the limit, the client id is refused (429) there without looking
   * at the secret until the minute is over.
   */
  async authenticate(credentials: ClientCredentials, address: string): Promise<OAuthClient> {
    const { clientId, clientSecret, usedBasic } = credentials;
    const failures = this.throttling.clientFailuresFrom(clientId, address);
    // The counter (a Redis round trip when shared) and the client are read at the same time.
    const [, { client, found }] = await Promise.all([
      failures.refuseIfExhausted(),
      PLAUSIBLE_ID.test(clientId)
        ? this.clients.findOrStandIn(clientId, this.unknownClient)
        : { client: this.unknownClient, found: false },
    ]);
    const secretMatches = this.secrets.verify(clientSecret, client.secretHash);
    if (!found || !secretMatches || client.disabled) {
      await failures.record();
      throw new InvalidClientException(usedBasic);
    }
    return client;
  }
}
