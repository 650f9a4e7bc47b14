import { Injectable, OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { calculateJwkThumbprint, importJWK, importPKCS8, type JWK } from 'jose';
import { createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject } from 'node:crypto';
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

/**
 * The keys tokens are signed and verified with. TOKEN_SIGNING_KEY when set; otherwise an Ed25519
 * key generated at first start and kept in the database, so every instance on that database signs
 * with the same key and tokens survive restarts. Keys stored in the database always verify, so a
 * move to TOKEN_SIGNING_KEY does not invalidate tokens already issued.
 */
@Injectable()
export class SigningKeysService implements OnModuleInit {
  private signer: SignerKey;
  private readonly verifiers = new Map<string, VerificationKey>();

  constructor(
    private readonly keys: SigningKeysRepository,
    private readonly config: ConfigService<Environment, true>,
  ) {}

  async onModuleInit() {
    await this.load();
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

  /** RFC 7517 key set of every public key a token may be verified with. */
  jwks(): { keys: JWK[] } {
    return { keys: [...this.verifiers.values()].map((k) => k.jwk) };
  }

  async load(): Promise<void> {
    const configured = this.config.get('TOKEN_SIGNING_KEY', { infer: true });
    const fromConfig = configured ? await material(parseConfiguredKey(configured)) : undefined;

    let rows = await this.keys.all();
    if (!fromConfig && !rows.some((row) => row.slot === SIGNING_SLOT)) {
      await this.generate();
      rows = await this.keys.all();
    }

    this.verifiers.clear();
    let stored: SignerKey | undefined;
    for (const row of rows) {
      const m = await material(parseStoredKey(row));
      this.verifiers.set(m.kid, m.verification);
      if (row.slot === SIGNING_SLOT) stored = m.signer;
    }
    if (fromConfig) this.verifiers.set(fromConfig.kid, fromConfig.verification);
    this.signer = fromConfig?.signer ?? stored!;
  }

  /**
   * Instances that start at once may all get here: each inserts its own key into the one
   * `signing` slot (unique), the database keeps the first, and everyone then reads that one.
   */
  private async generate() {
    const { privateKey } = generateKeyPairSync('ed25519');
    const m = await material(privateKey);
    await this.keys.insertUnlessSlotTaken({
      kid: m.kid,
      alg: m.signer.alg,
      privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      slot: SIGNING_SLOT,
      createdAt: Date.now(),
    });
  }
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
