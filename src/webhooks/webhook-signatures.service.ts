import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingHttpHeaders } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { ClusterEvents } from '../cluster/cluster-events.js';
import {
  ApiException,
  ServiceUnavailableApiException,
} from '../common/exceptions/api.exception.js';
import type { Environment } from '../config/environment.js';
import { NativeHmacWebhook } from './native-hmac-webhook.js';
import { WebhookSecretCipher } from './webhook-secret-cipher.js';
import type { WebhookSigningSecret } from './webhook-signing-secret.entity.js';
import { WebhookSigningSecretsRepository } from './webhook-signing-secrets.repository.js';

/** The additional data a stored secret is encrypted with: its row and its client. */
export const secretContext = (id: string, clientId: string) =>
  `webhook-signing-secret:${id}:${clientId}`;

/**
 * 401 for a delivery whose Standard Webhooks signature is missing, malformed, stale or wrong
 * (docs/contract.md §6). The message says which of those, never which secret was tried.
 */
export class WebhookSignatureException extends ApiException {
  readonly status = 401;
  constructor(message: string) {
    super(message);
    this.headers['WWW-Authenticate'] = 'WebhookSignature realm="webhooks"';
  }
}

const HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;
type SignatureHeader = (typeof HEADERS)[number];
const STALE = "The webhook-timestamp is more than 5 minutes away from the server's clock.";

/** How often a problem that lasts (a secret that cannot be decrypted) is logged again. */
const REPORT_AGAIN_MS = 10 * 60_000;

/**
 * Unix seconds in their one canonical spelling: the library reads the header with parseInt() and
 * checks the signature over the number it read, so `0<now>` (a leading zero) would be checked over
 * `<now>`, not over the header as sent (docs/contract.md §6).
 */
const TIMESTAMP = /^(0|[1-9][0-9]{0,11})$/;
/** Space-separated `<version>,<signature>` pairs; the library checks the `v1` ones. */
const SIGNATURE_LIST = /^[^\s,]+,[^\s,]+( [^\s,]+,[^\s,]+)*$/;

/**
 * A client's live secrets, or why they cannot be used (its deliveries are then refused), worded
 * with its client as it is logged.
 */
type ClientSecrets = { webhooks: Webhook[] } | { problem: string };

/**
 * Which clients sign their deliveries, and with what. Every secret is kept in memory, decrypted,
 * so that a delivery costs no database work, signed or not: loaded at start (a stored secret the
 * key cannot open stops the start), changed at once by this instance's own commands, pushed by
 * ClusterEvents from other processes (within about 1 s on PostgreSQL or Redis), and reloaded every
 * REVOCATION_REFRESH_MS all the same (the only way on SQLite), like revoked tokens.
 */
@Injectable()
export class WebhookSignatures implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(WebhookSignatures.name);
  private readonly cipher?: WebhookSecretCipher;
  private byClient = new Map<string, ClientSecrets>();
  /** Row id → its secret, so that a reload decrypts only the rows it has not seen. */
  private opened = new Map<string, Webhook>();
  private loading: Promise<string[]> = Promise.resolve([]);
  private busy = false;
  /** A refresh was asked for while one ran, whose read may have come before the change. */
  private again = false;
  private stopped = false;
  private timer?: NodeJS.Timeout;
  /** Each problem logged (a secret that cannot be decrypted), and when it was last. */
  private readonly reported = new Map<string, number>();

  constructor(
    private readonly secrets: WebhookSigningSecretsRepository,
    private readonly events: ClusterEvents,
    private readonly adapterHost: HttpAdapterHost,
    private readonly config: ConfigService<Environment, true>,
  ) {
    const key = config.get('WEBHOOK_SECRET_KEY', { infer: true });
    if (key) this.cipher = WebhookSecretCipher.fromText(key);
  }

  async onModuleInit() {
    // The CLI receives no deliveries: it only changes secrets.
    if (!this.adapterHost.httpAdapter) return;
    this.events.subscribe('webhook-secrets', () => this.refresh());
    const [problem] = await this.reload();
    if (problem) throw new Error(problem);
    const every = this.config.get('REVOCATION_REFRESH_MS', { infer: true });
    this.timer = setInterval(() => this.refresh(), every);
    this.timer.unref();
  }

  async onModuleDestroy() {
    clearInterval(this.timer);
    this.stopped = true;
    await this.loading.catch(() => undefined);
  }

  /**
   * Checks a delivery of `clientId` when that client has signing secrets: the three headers, the
   * timestamp within 5 minutes of the clock, and a `v1` signature over `body`, the bytes as
   * received, by one of its secrets (every one is tried, in constant time, by standardwebhooks).
   * True when the delivery was signed (and verified), false for a client that does not sign.
   */
  verify(clientId: string, headers: IncomingHttpHeaders, body: Buffer | undefined): boolean {
    const checked = this.verifyHeaders(clientId, headers);
    if (checked === undefined) return false;
    const { secrets, signed } = checked;
    const payload = body ?? '';
    let verified = false;
    let stale = false;
    // The package's refusal builds two Errors and formats a stack trace (over 200,000
    // instructions, for every delivery during a rotation, where one secret never matches); only
    // its message is used, so no stack is recorded while it checks.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      // Every secret, without stopping at the first match: the time taken does not tell which.
      for (const webhook of secrets.webhooks) {
        try {
          webhook.verify(payload, signed, { jsonParse: false });
          verified = true;
        } catch (error) {
          if (!(error instanceof WebhookVerificationError)) throw error;
          stale ||= /timestamp/i.test(error.message);
        }
      }
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    if (stale) {
      throw new WebhookSignatureException(STALE);
    }
    if (!verified) {
      throw new WebhookSignatureException(
        'The webhook signature does not match this delivery (its webhook-id, webhook-timestamp and body as sent).',
      );
    }
    return true;
  }

  /**
   * What can be checked before the body: whether the client signs, whether its secrets can be
   * opened (503), and its three headers present and well-formed (401). Undefined for a client
   * that does not sign.
   */
  verifyHeaders(
    clientId: string,
    headers: IncomingHttpHeaders,
  ): { secrets: { webhooks: Webhook[] }; signed: Record<SignatureHeader, string> } | undefined {
    const secrets = this.byClient.get(clientId);
    if (secrets === undefined) return undefined;
    // Fail closed: a client whose secrets cannot be opened gets no delivery accepted, and a
    // sender retries a 503 (the operator sees why in the log: report()).
    if ('problem' in secrets) {
      this.report(secrets.problem);
      throw new ServiceUnavailableApiException(
        'The webhook signature cannot be checked right now.',
      );
    }

    const missing = HEADERS.filter((name) => !headers[name]);
    if (missing.length > 0) {
      throw new WebhookSignatureException(
        `The webhook signature is missing: this client signs its deliveries, so the webhook-id, webhook-timestamp and webhook-signature headers are required (missing: ${missing.join(', ')}).`,
      );
    }
    const signed = {
      'webhook-id': headers['webhook-id'] as string,
      'webhook-timestamp': headers['webhook-timestamp'] as string,
      'webhook-signature': headers['webhook-signature'] as string,
    };
    if (!TIMESTAMP.test(signed['webhook-timestamp'])) {
      throw new WebhookSignatureException(
        'The webhook-timestamp header is malformed: it must be Unix time in seconds.',
      );
    }
    if (!SIGNATURE_LIST.test(signed['webhook-signature'])) {
      throw new WebhookSignatureException(
        'The webhook-signature header is malformed: it must be space-separated v1,<base64> signatures.',
      );
    }
    // standardwebhooks' own tolerance, checked here too so that it answers before the body.
    if (Math.abs(Math.floor(Date.now() / 1000) - Number(signed['webhook-timestamp'])) > 300) {
      throw new WebhookSignatureException(STALE);
    }
    return { secrets, signed };
  }

  /**
   * Reads every stored secret again (after those in progress), and resolves to the problems
   * found: secrets that cannot be decrypted, whose clients' deliveries are refused meanwhile.
   */
  reload(): Promise<string[]> {
    this.loading = this.loading.catch(() => []).then(() => this.load());
    return this.loading;
  }

  /** A timer's or another instance's call: keeps the last state when the database fails. */
  private refresh() {
    if (this.stopped) return;
    if (this.busy) {
      // Not dropped: another instance's change announced now would wait for the next tick.
      this.again = true;
      return;
    }
    this.busy = true;
    this.again = false;
    this.reload()
      .then((problems) => {
        if (problems.length === 0) this.reported.clear();
        for (const problem of problems) this.report(problem);
      })
      .catch((error: unknown) =>
        this.logger.warn({ err: error }, 'could not reload the webhook signing secrets'),
      )
      .finally(() => {
        this.busy = false;
        if (this.again) this.refresh();
      });
  }

  /**
   * Logs a problem when it is new, and again every REPORT_AGAIN_MS while it lasts: a reload runs
   * every REVOCATION_REFRESH_MS and a refused delivery may come every millisecond, and the same
   * line that often would bury the log. Problems are forgotten once a reload finds none.
   */
  private report(problem: string) {
    const now = Date.now();
    const last = this.reported.get(problem);
    if (last !== undefined && now - last < REPORT_AGAIN_MS) return;
    this.reported.set(problem, now);
    this.logger.error(problem);
  }

  private async load(): Promise<string[]> {
    const rows = await this.secrets.all();
    const byClient = new Map<string, ClientSecrets>();
    const opened = new Map<string, Webhook>();
    const problems: string[] = [];
    for (const row of rows) {
      const secrets = byClient.get(row.clientId) ?? { webhooks: [] };
      if ('problem' in secrets) continue;
      try {
        const webhook = this.opened.get(row.id) ?? this.open(row);
        opened.set(row.id, webhook);
        secrets.webhooks.push(webhook);
        byClient.set(row.clientId, secrets);
      } catch (error) {
        // Which client's deliveries are refused meanwhile, for the start-up error and the log.
        const problem = `${(error as Error).message.replace(/\.$/, '')} (client ${row.clientId}).`;
        problems.push(problem);
        byClient.set(row.clientId, { problem });
      }
    }
    this.byClient = byClient;
    this.opened = opened;
    return problems;
  }

  private open(row: WebhookSigningSecret): Webhook {
    if (!this.cipher) {
      throw new Error(
        'WEBHOOK_SECRET_KEY is not set, but webhook signing secrets are stored: set it to the key they were created with.',
      );
    }
    // Built once per secret (its whsec_ key decoded once), not per delivery.
    return new NativeHmacWebhook(
      this.cipher.decrypt(row.encryptedSecret, secretContext(row.id, row.clientId)),
    );
  }
}
