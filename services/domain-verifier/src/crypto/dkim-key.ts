import { generateKeyPair, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

const generate = promisify(generateKeyPair);

export type DkimKey = {
  selector: string;
  /** PKCS#8 PEM: seal it before storing, never return it. */
  privateKeyPem: string;
  /** Base64 SubjectPublicKeyInfo (DER): the `p=` of the DKIM record. */
  publicKey: string;
};

/**
 * A fresh RSA-2048 key (RFC 8301: at least 1024, 2048 recommended; some verifiers stop at 2048) and its
 * own selector, so a later key for the same domain can sit beside it during a rotation.
 */
export async function generateDkimKey(): Promise<DkimKey> {
  const { privateKey, publicKey } = await generate('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { selector: newSelector(), privateKeyPem: privateKey, publicKey: publicKey.toString('base64') };
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** `postline-` and 8 random base32 characters: a valid DNS label. */
export function newSelector(): string {
  return `postline-${[...randomBytes(8)].map((b) => ALPHABET[b % 32]).join('')}`;
}
