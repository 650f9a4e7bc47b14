import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { randomBytes, randomUUID } from 'node:crypto';
import { ClientsService } from '../auth/clients.service.js';
import { ClusterEvents } from '../cluster/cluster-events.js';
import type { Environment } from '../config/environment.js';
import { WebhookSecretCipher } from './webhook-secret-cipher.js';
import {
  SECRET_SLOTS,
  WebhookSigningSecretsRepository,
} from './webhook-signing-secrets.repository.js';
import { secretContext, WebhookSignatures } from './webhook-signatures.service.js';

/** A change of secrets the current state does not allow (the CLI prints it, exit 1). */
export class SigningSecretRefusedError extends Error {}

/** Standard Webhooks' secret prefix; the rest is base64 of 32 random bytes (the HMAC key). */
const SECRET_PREFIX = 'whsec_';

/**
 * Creating and retiring a client's signing secrets (`clients:webhook-secret`). Every instance
 * hears of a change through ClusterEvents, and reloads its secrets on a timer all the same
 * (WebhookSignatures).
 */
@Injectable()
export class WebhookSigningSecretsService {
  constructor(
    private readonly secrets: WebhookSigningSecretsRepository,
    private readonly clients: ClientsService,
    private readonly signatures: WebhookSignatures,
    private readonly events: ClusterEvents,
    private readonly config: ConfigService<Environment, true>,
  ) {}

  /** A new secret for the client, returned this once; refused when it has two already. */
  async create(clientId: string): Promise<{ clientId: string; secret: string }> {
    const key = this.config.get('WEBHOOK_SECRET_KEY', { infer: true });
    if (!key) {
      throw new SigningSecretRefusedError(
        'WEBHOOK_SECRET_KEY is not set: signing secrets are stored encrypted with it. Set it to 32 random bytes (openssl rand -base64 32), the same for every instance and the CLI.',
      );
    }
    await this.clients.assertExists(clientId);
    const cipher = WebhookSecretCipher.fromText(key);
    // A secret stored under another key would stop every instance from starting (they must open
    // every stored secret): refuse while the stored ones do not open with this key.
    for (const row of await this.secrets.all()) {
      try {
        cipher.decrypt(row.encryptedSecret, secretContext(row.id, row.clientId));
      } catch {
        throw new SigningSecretRefusedError(
          `WEBHOOK_SECRET_KEY does not decrypt the signing secrets already stored (client ${row.clientId}): set it to the key they were created with, the same for every instance and the CLI. Nothing was changed.`,
        );
      }
    }
    const secret = `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
    const id = randomUUID();
    const stored = await this.secrets.insertIntoFreeSlot({
      id,
      clientId,
      encryptedSecret: cipher.encrypt(secret, secretContext(id, clientId)),
      createdAt: Date.now(),
    });
    if (!stored) {
      throw new SigningSecretRefusedError(
        `The client has ${SECRET_SLOTS.length} signing secrets already; retire one first (--retire 1 removes the older).`,
      );
    }
    await this.changed();
    return { clientId, secret };
  }

  /** Removes the client's `nth` live secret, oldest first (1: the older of two). */
  async retire(clientId: string, nth: number): Promise<{ clientId: string; live: number }> {
    await this.clients.assertExists(clientId);
    const live = await this.secrets.ofClient(clientId);
    if (live.length === 0) throw new SigningSecretRefusedError('The client has no signing secret.');
    const retired = live[nth - 1];
    if (!retired) {
      throw new SigningSecretRefusedError(
        `--retire must be ${live.length === 1 ? '1' : '1 or 2'}: the client has ${live.length} signing secret${live.length === 1 ? '' : 's'}.`,
      );
    }
    await this.secrets.delete(retired.id);
    await this.changed();
    return { clientId, live: live.length - 1 };
  }

  /** This instance at once, the others within about a second (their timer otherwise). */
  private async changed() {
    await this.signatures.reload();
    await this.events.publish('webhook-secrets');
  }
}
