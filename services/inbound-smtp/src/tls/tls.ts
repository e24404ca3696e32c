import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import forge from 'node-forge';
import type { Logger } from '@postline/platform';

/** The PEM key and certificate the relay's and the MX's TLS use. */
export type TlsCredentials = { key: string; cert: string; selfSigned: boolean };

/** A generated certificate's life: long enough for any run, renewed by every restart. */
const SELF_SIGNED_DAYS = 365;

/**
 * SMTP_TLS_CERT / SMTP_TLS_KEY (PEM files) when both are given; else a self-signed pair generated now for
 * INBOUND_MX_HOST, logged as such (clients must then accept an unverified certificate: fine for tests and a
 * first run, not for production). Only one of the two set is a configuration error.
 */
export async function loadTlsCredentials(
  config: { SMTP_TLS_CERT?: string | undefined; SMTP_TLS_KEY?: string | undefined; INBOUND_MX_HOST: string },
  logger: Logger,
): Promise<TlsCredentials> {
  if (config.SMTP_TLS_CERT && config.SMTP_TLS_KEY) {
    const [cert, key] = await Promise.all([
      readFile(config.SMTP_TLS_CERT, 'utf8'),
      readFile(config.SMTP_TLS_KEY, 'utf8'),
    ]);
    return { cert, key, selfSigned: false };
  }
  if (config.SMTP_TLS_CERT || config.SMTP_TLS_KEY) {
    throw new Error('SMTP_TLS_CERT and SMTP_TLS_KEY must be set together');
  }
  const generated = selfSignedCertificate(config.INBOUND_MX_HOST, new Date());
  logger.warn(
    { host: config.INBOUND_MX_HOST },
    'SMTP TLS: no SMTP_TLS_CERT/SMTP_TLS_KEY given, using a self-signed certificate generated at start',
  );
  return { ...generated, selfSigned: true };
}

/**
 * A certificate serial number (hex) from random bytes, as DER must encode it: a positive INTEGER in its
 * shortest form, so the first byte is neither 0 (a padding byte OpenSSL refuses: "illegal padding") nor
 * 0x80 or more (negative).
 */
export function positiveSerial(random: Buffer): string {
  const bytes = Buffer.from(random);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return bytes.toString('hex');
}

/**
 * A self-signed certificate for `host`: the RSA key from Node's own (native, fast) generator, the X.509
 * structure and its signature from node-forge (Node has no certificate builder).
 */
export function selfSignedCertificate(host: string, now: Date): { key: string; cert: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey);
  cert.serialNumber = positiveSerial(randomBytes(16));
  cert.validity.notBefore = new Date(now.getTime() - 60_000);
  cert.validity.notAfter = new Date(now.getTime() + SELF_SIGNED_DAYS * 86_400_000);
  const subject = [{ name: 'commonName', value: host }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 2, value: host }] },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(privateKey), forge.md.sha256.create());
  return { key: privateKey, cert: forge.pki.certificateToPem(cert) };
}
