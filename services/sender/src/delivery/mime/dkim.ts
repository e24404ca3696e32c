import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createOpenedCache, loadOnFirstUse } from '@postline/platform/pure';
import { toCrlf } from '../../message/index.ts';

// mailauth's signing steps, loaded with the first message signed (about 5 MB of heap with what they need).
const mailauth = loadOnFirstUse(async () => {
  const [body, header, tools] = await Promise.all([
    import('mailauth/lib/dkim/body/index.js'),
    import('mailauth/lib/dkim/header/index.js'),
    import('mailauth/lib/tools.js'),
  ]);
  return { ...body, ...header, ...tools };
});

export type DkimKey = { domain: string; selector: string; privateKeyPem: string };

/** Signing failed: the message must not be sent (fail closed, never unsigned). */
export class DkimSigningError extends Error {
  override name = 'DkimSigningError';
}

/**
 * Headers signed when present. mailauth's default list lacks List-Unsubscribe-Post, which RFC 8058 requires
 * to be signed together with List-Unsubscribe (RFC 8058 §4).
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
 * bytes that go on the wire. Rejects with a DkimSigningError for a non-RSA or unreadable key, a message
 * without From, or a failed signature.
 */
export type DkimSigner = (raw: Buffer, key: DkimKey) => Promise<Buffer>;

/**
 * A DkimSigner that keeps the key objects it opened, by PEM (at most `maxKeys`, 1000 by default).
 *
 * The canonicalization, the h= list and the header line are mailauth's own (its signer's steps, called in
 * turn); only the key differs: mailauth's signer opens the PEM for every message, and an RSA key used for
 * the first time costs about twice a signature (OpenSSL sets up its blinding and Montgomery values per key
 * object), so each domain's key object is kept and reused here. The RSA operation itself runs on libuv's
 * thread pool, off the event loop that drives the SMTP sessions.
 */
export function createDkimSigner(opts: { maxKeys?: number } = {}): DkimSigner {
  const rsaKeyOf = createOpenedCache(openRsaKey, opts.maxKeys ?? 1000);
  return (raw, key) => signMessage(raw, key, rsaKeyOf);
}

async function signMessage(raw: Buffer, key: DkimKey, rsaKeyOf: (pem: string) => KeyObject): Promise<Buffer> {
  let privateKey: KeyObject;
  try {
    privateKey = rsaKeyOf(key.privateKeyPem);
  } catch (error) {
    throw error instanceof UnusableKey
      ? new DkimSigningError(error.describe(key), error.cause === undefined ? undefined : { cause: error.cause })
      : error;
  }
  const { dkimBody, formatSignatureHeaderLine, generateCanonicalizedHeader, getSigningHeaderLines, parseHeaders } =
    await mailauth();
  const message = toCrlf(raw);
  const end = message.indexOf('\r\n\r\n');
  // Without an empty line the whole message is header (RFC 5322 §2.1) and the body is empty.
  const headerBytes = end < 0 ? message : message.subarray(0, end + 4);
  const body = end < 0 ? Buffer.alloc(0) : message.subarray(end + 4);

  const signingLines = getSigningHeaderLines(parseHeaders(headerBytes).parsed, SIGNED_HEADERS.join(':'));
  if (!signingLines.headers.some((h) => h.key === 'from')) {
    throw new DkimSigningError(`DKIM signing for ${key.domain} refused: the message has no From header`);
  }
  const hasher = dkimBody('relaxed', 'sha256', false);
  hasher.update(body);
  let signatureLine: string;
  try {
    const { canonicalizedHeader, dkimHeaderOpts } = generateCanonicalizedHeader('DKIM', signingLines, {
      signingDomain: key.domain,
      selector: key.selector,
      algorithm: 'rsa-sha256',
      canonicalization: 'relaxed/relaxed',
      bodyHash: hasher.digest('base64'),
      // The same t= in the signed line and the line emitted.
      timestamp: Math.floor(Date.now() / 1000),
      expiration: false,
    });
    dkimHeaderOpts.b = (await rsaSha256(canonicalizedHeader, privateKey)).toString('base64');
    signatureLine = formatSignatureHeaderLine('DKIM', dkimHeaderOpts, true);
  } catch (error) {
    throw new DkimSigningError(`DKIM signing failed for ${key.domain}`, { cause: error });
  }
  if (!/^DKIM-Signature:/i.test(signatureLine) || !/\bb=[A-Za-z0-9+/]/.test(signatureLine)) {
    throw new DkimSigningError(`DKIM signing for ${key.domain} produced no DKIM-Signature header`);
  }
  return Buffer.concat([Buffer.from(`${signatureLine}\r\n`, 'utf8'), message]);
}

/** crypto.sign with a callback: the signature is computed on libuv's thread pool. */
function rsaSha256(data: Buffer, privateKey: KeyObject): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    sign('sha256', data, privateKey, (err, signature) => (err ? reject(err) : resolve(signature)));
  });
}

/** A PEM that is no DKIM signing key; `describe` says why, naming the domain it was meant for. */
class UnusableKey extends Error {
  readonly describe: (key: DkimKey) => string;
  constructor(describe: (key: DkimKey) => string, cause?: unknown) {
    super('unusable DKIM key', cause === undefined ? undefined : { cause });
    this.describe = describe;
  }
}

/** The RSA private key object of a PEM, checked to be one a verifier accepts. */
function openRsaKey(pem: string): KeyObject {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch (error) {
    throw new UnusableKey((key) => `unreadable DKIM private key for ${key.selector}._domainkey.${key.domain}`, error);
  }
  const keyType = privateKey.asymmetricKeyType;
  if (keyType !== 'rsa') {
    throw new UnusableKey((key) => `DKIM key for ${key.domain} is ${keyType ?? 'unknown'}, rsa-sha256 needs RSA`);
  }
  if ((privateKey.asymmetricKeyDetails?.modulusLength ?? 0) < 1024) {
    throw new UnusableKey(
      (key) => `DKIM key for ${key.domain} is shorter than 1024 bits, which verifiers must refuse (RFC 8301)`,
    );
  }
  return privateKey;
}

let onboardingKey: string | undefined;

/**
 * The key the onboarding sender's messages are signed with: made once per process (RSA 2048, PKCS#8 PEM).
 * Those messages never leave the install, so no DNS record names it; it makes them as any other is made.
 */
export function onboardingKeyPem(): string {
  onboardingKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
    type: 'pkcs8',
    format: 'pem',
  }) as string;
  return onboardingKey;
}
