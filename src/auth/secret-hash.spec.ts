import { ClientSecretHasher, generateClientSecret } from './secret-hash.js';

describe('client secret hashing', () => {
  const hasher = new ClientSecretHasher();

  it('generates 256-bit URL-safe secrets, different each time', () => {
    const a = generateClientSecret();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(generateClientSecret()).not.toBe(a);
  });

  it('accepts the secret and refuses anything else', () => {
    const secret = generateClientSecret();
    const stored = hasher.hash(secret);
    expect(stored).toMatch(/^hmac-sha256\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
    expect(stored).not.toContain(secret);
    expect(hasher.verify(secret, stored)).toBe(true);
    expect(hasher.verify(`${secret}x`, stored)).toBe(false);
    expect(hasher.verify('', stored)).toBe(false);
  });

  it('salts: one secret hashed twice gives two hashes', () => {
    expect(hasher.hash('same')).not.toBe(hasher.hash('same'));
  });

  it("refuses against the unknown client's hash, which has a real hash's form, and a corrupt hash", () => {
    const real = hasher.hash(generateClientSecret()).split('$');
    const standIn = hasher.unknownClientHash.split('$');
    expect(standIn.map((part) => part.length)).toEqual(real.map((part) => part.length));
    expect(standIn[0]).toBe(real[0]);
    expect(hasher.verify('anything', hasher.unknownClientHash)).toBe(false);
    expect(hasher.verify('anything', 'garbage')).toBe(false);
  });
});
