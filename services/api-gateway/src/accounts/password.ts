import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// scrypt (node's own, no native package), N=2^15, r=8, p=1: about 32 MiB and some tens of milliseconds per hash.
// Stored self-describing, so the cost can rise later without breaking stored hashes:
//   scrypt$N$r$p$<salt base64url>$<hash base64url>
const COST = { N: 2 ** 15, r: 8, p: 1 };
const KEY_BYTES = 32;

function derive(password: string, salt: Buffer, cost: typeof COST): Promise<Buffer> {
  const options: ScryptOptions = { ...cost, maxmem: 128 * cost.N * cost.r * 2 };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** A hash of no one's password: checked when there is no such account, so that both cases take the same time. */
const DECOY = hashPassword(randomBytes(16).toString('base64url'));

/**
 * Whether `password` matches `stored`. Without a stored hash the decoy is checked and false returned, doing the
 * same work as for a real account.
 */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = (stored ?? (await DECOY)).split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return stored !== undefined && key.length === expected.length && timingSafeEqual(key, expected);
}
