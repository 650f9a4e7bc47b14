import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { calculateJwkThumbprint, importJWK, importPKCS8, type JWK } from 'jose';
import { createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject } from 'node:crypto';
import { ClusterEvents } from '../cluster/cluster-events.js';
import { ApiException } from '../common/exceptions/api.exception.js';
import { Environment, InvalidEnvironmentError } from '../config/environment.js';
import { SIGNING_SLOT, SigningKey } from './signing-key.entity.js';
import { SigningKeysRepository } from './signing-keys.repository.js';

type Key = Awaited<ReturnType<typeof importPKCS8>>;

export interface VerificationKey {
  kid: string;
  alg: string;
  key: Key;
  jwk: JWK;
}

export interface SignerKey {
  kid: string;
  alg: string;
  key: Key;
}

/** The database holds a signing key this process cannot read (edited by hand, or corrupted). */
export class UnusableStoredKeyException extends ApiException {
  readonly status = 500;

  constructor(kid: string) {
    super(`The signing key ${kid} stored in oauth_signing_keys cannot be used.`);
  }
}

const BAD_KEY =
  'Invalid configuration: TOKEN_SIGNING_KEY must be a PEM private key (Ed25519 or P-256)';

/** A key-rotation command refused (TOKEN_SIGNING_KEY set, unknown kid, the signing key). */
export class KeyRotationRefusedError extends Error {}

export type KeyState = 'signing' | 'verifying' | 'retired';

export interface KeyListing {
  kid: string;
  alg: string;
  state: KeyState;
  source: 'database' | 'TOKEN_SIGNING_KEY';
  created_at: string | null;
  retired_at: string | null;
}

/** How often every instance reads the key table, so that a rotation or retirement made by
 * another instance or the CLI applies everywhere within 1 s (CONTRACT §3). */
const KEY_REFRESH_MS = 500;
/** The ClusterEvents topic of key changes. */
const KEYS_TOPIC = 'signing-keys';

type Material = Awaited<ReturnType<typeof material>>;

/**
 * The keys tokens are signed and verified with. TOKEN_SIGNING_KEY when set; otherwise an Ed25519
 * key generated at first start and kept in the database, so every instance on that database signs
 * with the same key and tokens survive restarts. `keys:rotate` makes a new key that signs from
 * then on; earlier keys keep verifying (and stay in the JWKS) until `keys:retire`. Keys stored in
 * the database verify unless retired, so a move to TOKEN_SIGNING_KEY does not invalidate tokens
 * already issued.
 */
@Injectable()
export class SigningKeysService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(SigningKeysService.name);
  private signer: SignerKey;
  private verifiers = new Map<string, VerificationKey>();
  /** Imported keys by kid: a refresh imports only keys it has not seen. */
  private readonly imported = new Map<string, Material>();
  /** What the last load saw (kid, slot, retirement of every row): unchanged means nothing to do. */
  private loadedState = '';
  private timer?: NodeJS.Timeout;
  private refreshing?: Promise<void>;

  constructor(
    private readonly keys: SigningKeysRepository,
    private readonly config: ConfigService<Environment, true>,
    private readonly events: ClusterEvents,
  ) {}

  async onModuleInit() {
    // A key change on any instance (published after it) reaches every instance at once; the
    // periodic refresh below repairs a missed message.
    this.events.subscribe(KEYS_TOPIC, () => this.refresh());
    await this.load();
    this.timer = setInterval(() => {
      this.refresh().catch((error: unknown) =>
        // Keep the last known keys; the next tick tries again.
        this.logger.warn({ err: error }, 'could not refresh the signing keys'),
      );
    }, KEY_REFRESH_MS);
    this.timer.unref();
  }

  async onModuleDestroy() {
    clearInterval(this.timer);
    await this.refreshing?.catch(() => undefined);
  }

  /** The key new tokens are signed with. */
  get signing(): SignerKey {
    return this.signer;
  }

  /** The algorithms a token may be signed with: only those of our own keys (pinned). */
  get algorithms(): string[] {
    return [...new Set([...this.verifiers.values()].map((k) => k.alg))];
  }

  verificationKey(kid: string | undefined): VerificationKey | undefined {
    return kid === undefined ? undefined : this.verifiers.get(kid);
  }

  /** RFC 7517 key set of every public key a token may be verified with (retired ones excluded). */
  jwks(): { keys: JWK[] } {
    return { keys: [...this.verifiers.values()].map((k) => k.jwk) };
  }

  /**
   * Re-reads the key table and applies what changed (a rotation, a retirement). Called
   * periodically; a push channel between instances may call it too. Concurrent calls share one
   * read.
   */
  refresh(): Promise<void> {
    this.refreshing ??= this.load().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** `keys:rotate`: a new key signs from now on; the previous one keeps verifying. */
  async rotate(): Promise<{ kid: string; previous_kid: string | null }> {
    this.refuseWhenConfigured();
    const key = await newSigningKey();
    const previous = await this.keys.replaceSigningKey(key);
    await this.refresh();
    await this.announceChange();
    return { kid: key.kid, previous_kid: previous };
  }

  /**
   * `keys:retire --kid`: the key's tokens are refused from now on, and it leaves the JWKS. With
   * TOKEN_SIGNING_KEY set every database key only verifies, so any of them may be retired; the one
   * that signed before then gives up its slot, and a later start without the variable makes a new
   * key rather than sign with a retired one.
   */
  async retire(kid: string): Promise<{ kid: string; retired_at: string }> {
    const row = await this.keys.findByKid(kid);
    if (!row) throw new KeyRotationRefusedError(`No signing key has the kid ${kid}.`);
    if (row.slot === SIGNING_SLOT && !this.configuredKid()) {
      throw new KeyRotationRefusedError(
        `The key ${kid} signs new tokens: run keys:rotate first, then retire it.`,
      );
    }
    const retiredAt = row.retiredAt ?? Date.now();
    if (row.retiredAt === null) {
      await this.keys.retire(kid, retiredAt);
    }
    await this.refresh();
    await this.announceChange();
    return { kid, retired_at: new Date(retiredAt).toISOString() };
  }

  /** Tells every instance to re-read the keys (they also do every KEY_REFRESH_MS). */
  private async announceChange() {
    await this.events
      .publish(KEYS_TOPIC, 'changed')
      .catch((error: unknown) =>
        this.logger.warn({ err: error }, 'could not announce a key change; instances will poll'),
      );
  }

  /** `keys:list`: every key, oldest first, with its state. */
  async list(): Promise<KeyListing[]> {
    const rows = await this.keys.all();
    const configured = this.configuredKid();
    const listed: KeyListing[] = rows.map((row) => ({
      kid: row.kid,
      alg: row.alg,
      state:
        row.retiredAt !== null
          ? 'retired'
          : row.slot === SIGNING_SLOT && !configured
            ? 'signing'
            : 'verifying',
      source: 'database',
      created_at: new Date(row.createdAt).toISOString(),
      retired_at: row.retiredAt === null ? null : new Date(row.retiredAt).toISOString(),
    }));
    if (configured) {
      listed.push({
        kid: configured,
        alg: this.signer.alg,
        state: 'signing',
        source: 'TOKEN_SIGNING_KEY',
        created_at: null,
        retired_at: null,
      });
    }
    return listed;
  }

  private configuredKid(): string | undefined {
    return this.config.get('TOKEN_SIGNING_KEY', { infer: true }) ? this.signer.kid : undefined;
  }

  private refuseWhenConfigured() {
    if (this.config.get('TOKEN_SIGNING_KEY', { infer: true })) {
      throw new KeyRotationRefusedError(
        "TOKEN_SIGNING_KEY is set: key rotation is the operator's (set a new TOKEN_SIGNING_KEY " +
          'and restart every instance). Nothing was changed.',
      );
    }
  }

  private async load(): Promise<void> {
    const configured = this.config.get('TOKEN_SIGNING_KEY', { infer: true });
    let rows = await this.keys.all();
    if (!configured && !rows.some((row) => row.slot === SIGNING_SLOT)) {
      await this.generate();
      rows = await this.keys.all();
    }
    const state = rows.map((r) => `${r.kid}:${r.slot}:${r.retiredAt}`).join(',');
    if (this.signer && state === this.loadedState) return;

    const fromConfig = configured ? await material(parseConfiguredKey(configured)) : undefined;
    const verifiers = new Map<string, VerificationKey>();
    let stored: SignerKey | undefined;
    for (const row of rows) {
      if (row.retiredAt !== null) continue;
      let m = this.imported.get(row.kid);
      if (!m) {
        m = await material(parseStoredKey(row));
        this.imported.set(row.kid, m);
      }
      verifiers.set(m.kid, m.verification);
      if (row.slot === SIGNING_SLOT) stored = m.signer;
    }
    if (fromConfig) verifiers.set(fromConfig.kid, fromConfig.verification);
    this.verifiers = verifiers;
    this.signer = fromConfig?.signer ?? stored!;
    this.loadedState = state;
  }

  /**
   * Instances that start at once may all get here: each inserts its own key into the one
   * `signing` slot (unique), the database keeps the first, and everyone then reads that one.
   */
  private async generate() {
    await this.keys.insertUnlessSlotTaken(await newSigningKey());
  }
}

/** A fresh Ed25519 key, as the row that makes it the signing key. */
async function newSigningKey(): Promise<SigningKey> {
  const { privateKey } = generateKeyPairSync('ed25519');
  const m = await material(privateKey);
  return {
    kid: m.kid,
    alg: m.signer.alg,
    privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    slot: SIGNING_SLOT,
    createdAt: Date.now(),
    retiredAt: null,
  };
}

function parseConfiguredKey(pem: string): KeyObject {
  try {
    // Environment variables often carry a PEM with its newlines escaped.
    return createPrivateKey(pem.includes('\\n') ? pem.replace(/\\n/g, '\n') : pem);
  } catch {
    throw new InvalidEnvironmentError(BAD_KEY);
  }
}

function parseStoredKey(row: SigningKey): KeyObject {
  try {
    const key = createPrivateKey(row.privateKey);
    algorithmOf(key);
    return key;
  } catch {
    throw new UnusableStoredKeyException(row.kid);
  }
}

async function material(privateKey: KeyObject) {
  const alg = algorithmOf(privateKey);
  const pkcs8 = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const publicJwk = createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  const kid = await calculateJwkThumbprint(publicJwk);
  const jwk: JWK = { ...publicJwk, kid, alg, use: 'sig' };
  return {
    kid,
    signer: { kid, alg, key: await importPKCS8(pkcs8, alg) },
    verification: { kid, alg, jwk, key: (await importJWK(publicJwk, alg)) as Key },
  };
}

function algorithmOf(key: KeyObject): 'EdDSA' | 'ES256' {
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') {
    return 'ES256';
  }
  throw new InvalidEnvironmentError(BAD_KEY);
}
