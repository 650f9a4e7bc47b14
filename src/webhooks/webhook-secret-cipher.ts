import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A stored secret that the key does not open: another key, or a row changed in the database. */
export class UndecryptableSecretError extends Error {}

/**
 * AES-256-GCM for the webhook signing secrets at rest. They must stay usable for HMAC, so unlike
 * client secrets they cannot be hashed; encrypted under a key that lives outside the database
 * (WEBHOOK_SECRET_KEY), a dump of the database reveals none of them. `context` (GCM's additional
 * data: the row's id and client) ties a ciphertext to its row, so a row copied onto another
 * client with database access does not verify that client's deliveries.
 */
export class WebhookSecretCipher {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('A webhook secret key is 32 bytes.');
    this.key = key;
  }

  /** WEBHOOK_SECRET_KEY's text (64 hex digits or base64 of 32 bytes) as a cipher. */
  static fromText(text: string): WebhookSecretCipher {
    return new WebhookSecretCipher(
      /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64'),
    );
  }

  encrypt(plain: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context));
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, iv, sealed, cipher.getAuthTag()]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  decrypt(stored: string, context: string): string {
    const [version, iv, sealed, tag, ...rest] = stored.split('.');
    if (version !== VERSION || !iv || !sealed || !tag || rest.length > 0) {
      throw new UndecryptableSecretError('The stored webhook secret is not in a known format.');
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([
        decipher.update(Buffer.from(sealed, 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new UndecryptableSecretError(
        'WEBHOOK_SECRET_KEY does not decrypt a stored webhook signing secret (another key, or a changed row).',
      );
    }
  }
}
