import { generateClientSecret, hashClientSecret, verifyClientSecret } from './secret-hash.js';

describe('client secret hashing', () => {
  it('generates 256-bit URL-safe secrets, different each time', () => {
    const a = generateClientSecret();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(generateClientSecret()).not.toBe(a);
  });

  it('accepts the secret and refuses anything else', () => {
    const secret = generateClientSecret();
    const stored = hashClientSecret(secret);
    expect(stored).toMatch(/^hmac-sha256\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
    expect(stored).not.toContain(secret);
    expect(verifyClientSecret(secret, stored)).toBe(true);
    expect(verifyClientSecret(`${secret}x`, stored)).toBe(false);
    expect(verifyClientSecret('', stored)).toBe(false);
  });

  it('salts: one secret hashed twice gives two hashes', () => {
    expect(hashClientSecret('same')).not.toBe(hashClientSecret('same'));
  });

  it('refuses an unknown client (no stored hash) and a corrupt hash', () => {
    expect(verifyClientSecret('anything', undefined)).toBe(false);
    expect(verifyClientSecret('anything', 'garbage')).toBe(false);
  });
});
