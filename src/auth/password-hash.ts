import { randomBytes, scrypt, ScryptOptions, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';

// scrypt's recommended interactive cost (N=2^14, r=8, p=1): about 50 ms and 16 MiB a hash.
const COST = { N: 16384, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

/**
 * Hashes running at once: one core's worth is left to the event loop, so a burst of password
 * grants cannot starve every other request of CPU, and memory stays bounded (16 MiB a hash).
 * Further hashes wait their turn (the grant is slow by design; other routes are not).
 */
const MAX_CONCURRENT = Math.max(1, availableParallelism() - 1);
let running = 0;
const waiting: (() => void)[] = [];

/** The async API runs scrypt on the libuv pool, so hashing never blocks the event loop. */
async function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  if (running >= MAX_CONCURRENT) await new Promise<void>((resume) => waiting.push(resume));
  running += 1;
  try {
    return await new Promise<Buffer>((resolve, reject) =>
      scrypt(password, salt, KEY_LENGTH, { ...options, maxmem: 64 * 1024 * 1024 }, (err, key) =>
        err ? reject(err) : resolve(key),
      ),
    );
  } finally {
    running -= 1;
    waiting.shift()?.();
  }
}

/** `scrypt$N$r$p$<salt>$<key>`: the parameters travel with the hash so the cost can be raised. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')]
    .map(String)
    .join('$');
}

// Checked against when the username is unknown, so that the answer time does not tell which
// usernames exist.
let unknownUserHash: Promise<string> | undefined;

/** Constant-time check of `password`; `undefined` stands for "no such user". */
export async function verifyPassword(
  password: string,
  stored: string | undefined,
): Promise<boolean> {
  const hash =
    stored ?? (await (unknownUserHash ??= hashPassword(randomBytes(16).toString('hex'))));
  const [scheme, N, r, p, salt, expected] = hash.split('$');
  if (scheme !== 'scrypt' || !salt || !expected) return false;
  const wanted = Buffer.from(expected, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), {
    N: Number(N),
    r: Number(r),
    p: Number(p),
  });
  return actual.length === wanted.length && timingSafeEqual(actual, wanted) && stored !== undefined;
}
