import { createPrivateKey } from 'node:crypto';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';

export type DkimKey = { domain: string; selector: string; privateKeyPem: string };

/** Signing failed: the message must not be sent (MAIL-NOTES.md §0.1, §12.12: fail closed, never unsigned). */
export class DkimSigningError extends Error {
  override name = 'DkimSigningError';
}

/**
 * Headers signed when present. mailauth's default list lacks List-Unsubscribe-Post, which RFC 8058 requires
 * to be signed together with List-Unsubscribe (MAIL-NOTES.md §0.2).
 */
export const SIGNED_HEADERS = [
  'From',
  'Sender',
  'Reply-To',
  'Subject',
  'Date',
  'Message-ID',
  'To',
  'Cc',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'Content-ID',
  'Content-Description',
  'In-Reply-To',
  'References',
  'List-Id',
  'List-Help',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
  'List-Subscribe',
  'List-Post',
  'List-Owner',
  'List-Archive',
  'Feedback-ID',
];

/**
 * Signs `raw` with rsa-sha256, relaxed/relaxed, and returns the message with the DKIM-Signature header in
 * front. Line endings are made CRLF first (bare LF and bare CR alike), since the signature must cover the
 * bytes that go on the wire. Throws DkimSigningError for a non-RSA or unreadable key, a mailauth error, or a
 * result without a signature.
 */
export async function signMessage(raw: Buffer, key: DkimKey): Promise<Buffer> {
  // Parsing a PEM costs about as much as a signature; a key checked once stays good (mailauth parses it again).
  if (!checkedKeys.has(key.privateKeyPem)) {
    let privateKey;
    try {
      privateKey = createPrivateKey(key.privateKeyPem);
    } catch (error) {
      throw new DkimSigningError(`unreadable DKIM private key for ${key.selector}._domainkey.${key.domain}`, { cause: error });
    }
    if (privateKey.asymmetricKeyType !== 'rsa') {
      throw new DkimSigningError(`DKIM key for ${key.domain} is ${privateKey.asymmetricKeyType ?? 'unknown'}, rsa-sha256 needs RSA`);
    }
    if (checkedKeys.size >= 1000) checkedKeys.clear();
    checkedKeys.add(key.privateKeyPem);
  }

  const message = toCrlf(raw);
  const signature = {
    signingDomain: key.domain,
    selector: key.selector,
    privateKey: key.privateKeyPem,
    canonicalization: 'relaxed/relaxed',
    algorithm: 'rsa-sha256',
    headerList: SIGNED_HEADERS,
  };
  // mailauth signs only what signatureData lists; the top-level copy satisfies its option type.
  const result = await dkimSign(message, { ...signature, signatureData: [signature] });
  if (result.errors.length > 0) {
    throw new DkimSigningError(`DKIM signing failed for ${key.domain}: ${JSON.stringify(result.errors)}`);
  }
  if (!/^DKIM-Signature:/im.test(result.signatures)) {
    throw new DkimSigningError(`DKIM signing for ${key.domain} produced no DKIM-Signature header`);
  }
  return Buffer.concat([Buffer.from(result.signatures, 'utf8'), message]);
}

/** RSA private keys (PEM) already found readable. */
const checkedKeys = new Set<string>();

/** Bare LF and bare CR become CRLF; bytes are otherwise untouched (latin1 maps each byte to one char). */
export function toCrlf(raw: Buffer): Buffer {
  return Buffer.from(raw.toString('latin1').replace(/\r\n|\r|\n/g, '\r\n'), 'latin1');
}
