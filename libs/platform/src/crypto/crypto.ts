import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export function sha256Hex(value: string | Buffer): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time comparison of two strings (hash them first when lengths may differ). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/** URL-safe random token with `bytes` of entropy. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export type SecretBox = {
  seal(plaintext: string): string;
  open(sealed: string): string;
};

/**
 * Authenticated encryption (AES-256-GCM) for secrets at rest: DKIM private keys, webhook signing secrets.
 * The key is derived from POSTLINE_SECRET_KEY with SHA-256, so any long random string works.
 * Sealed form: `v1.<iv>.<tag>.<ciphertext>` (base64url parts).
 */
export function createSecretBox(secretKey: string): SecretBox {
  if (secretKey.length < 16) throw new Error('POSTLINE_SECRET_KEY must be at least 16 characters');
  const key = createHash('sha256').update(`postline-secret-box:${secretKey}`).digest();
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', iv, cipher.getAuthTag(), ct]
        .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
        .join('.');
    },
    open(sealed) {
      const [version, iv, tag, ct] = sealed.split('.');
      if (version !== 'v1' || iv === undefined || tag === undefined || ct === undefined) {
        throw new Error('not a sealed secret');
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
