import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * VERP (variable envelope return paths): `b.<email id hex>.<recipient index | x>.<tag>@<return path>`, where
 * the tag is an HMAC over the rest, so a forged or edited bounce address is refused and cannot suppress
 * arbitrary recipients. All lower case (MTAs may change the case of a local part) and at most 48 octets of
 * local part for indexes below 1000 (RFC 5321 allows 64).
 */
export type VerpInput = {
  /** The email's UUID. */
  emailId: string;
  /** Index of the recipient in the email, or omitted for an address that names the email only. */
  recipient?: number;
  /** The return-path domain, e.g. `send.example.com`. */
  returnPath: string;
  key: string;
};

export type VerpToken = { emailId: string; recipient: number | null };

const TAG_CHARS = 10; // 50 bits of HMAC-SHA256
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const LOCAL = /^b\.([0-9a-f]{32})\.(0|[1-9]\d{0,8}|x)\.([a-z2-7]{10})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function verpAddress({ emailId, recipient, returnPath, key }: VerpInput): string {
  const id = emailId.toLowerCase();
  if (!UUID.test(id)) throw new Error(`not a UUID: ${emailId}`);
  if (recipient !== undefined && !(Number.isSafeInteger(recipient) && recipient >= 0 && recipient < 1e9)) {
    throw new Error(`bad recipient index: ${recipient}`);
  }
  const hex = id.replaceAll('-', '');
  const index = recipient === undefined ? 'x' : String(recipient);
  const domain = returnPath.toLowerCase();
  return `b.${hex}.${index}.${tag(key, hex, index, domain)}@${domain}`;
}

/** The email and recipient an address names, or undefined when it is not ours or its tag does not verify. */
export function parseVerp(address: string, key: string): VerpToken | undefined {
  const at = address.lastIndexOf('@');
  if (at <= 0) return undefined;
  const local = address.slice(0, at).toLowerCase();
  const domain = address.slice(at + 1).toLowerCase();
  const match = LOCAL.exec(local);
  if (!match || !domain) return undefined;
  const [, hex = '', index = '', given = ''] = match;
  const expected = Buffer.from(tag(key, hex, index, domain));
  if (!timingSafeEqual(expected, Buffer.from(given))) return undefined;
  const emailId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { emailId, recipient: index === 'x' ? null : Number(index) };
}

function tag(key: string, hex: string, index: string, domain: string): string {
  const mac = createHmac('sha256', key).update(`verp:${hex}.${index}@${domain}`).digest();
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of mac) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < TAG_CHARS) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    if (out.length === TAG_CHARS) break;
    value &= (1 << bits) - 1;
  }
  return out;
}

/**
 * The VERP tag key of a deployment: derived from POSTLINE_SECRET_KEY, so that a leaked tag key opens no
 * secret box, nor the other way round. The sender tags with it; the inbound MX checks bounces with it.
 */
export function verpKeyOf(secretKey: string): string {
  return createHash('sha256').update(`postline-verp:${secretKey}`).digest('hex');
}
