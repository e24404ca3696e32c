// What the relay reads of a session and a message before handing it to the gateway: the AUTH username,
// the shape of the API key, envelope addresses the gateway's headers can carry, and the idempotency key a
// client put in the message's header block (Resend's SMTP documents `Resend-Idempotency-Key`).

/** AUTH usernames: the service's own name, and Resend's for drop-in compatibility (case-insensitive). */
export const RELAY_USERNAMES = ['postline', 'resend'] as const;

/** The MIME headers that carry an idempotency key, as the REST `Idempotency-Key` header does. */
const IDEMPOTENCY_HEADERS = new Set(['resend-idempotency-key', 'postline-idempotency-key']);

export function isRelayUsername(username: string): boolean {
  return (RELAY_USERNAMES as readonly string[]).includes(username.trim().toLowerCase());
}

/**
 * Whether `password` can be an API key at all: visible ASCII, at most 256 characters. Anything else is
 * refused without asking the gateway (it could not travel in an Authorization header anyway).
 */
export function looksLikeApiKey(password: string): boolean {
  return password.length > 0 && password.length <= 256 && /^[\x21-\x7e]+$/.test(password);
}

/** Why an envelope address cannot be submitted, if it cannot. */
export type AddressProblem = 'non-ascii' | 'comma';

/**
 * The gateway takes the envelope in HTTP headers (Postline-Envelope-To is comma-separated), so an address
 * must be ASCII (SMTPUTF8 is not offered) and free of commas (possible in a quoted local part).
 */
export function envelopeAddressProblem(address: string): AddressProblem | undefined {
  if (!/^[\x20-\x7e]*$/.test(address)) return 'non-ascii';
  if (address.includes(',')) return 'comma';
  return undefined;
}

export type IdempotencyKey = { ok: true; key: string | undefined } | { ok: false };

/**
 * The value of the first `Resend-Idempotency-Key` or `Postline-Idempotency-Key` header of the message's
 * header block (up to the first empty line; a header-looking line in the body is not one), unfolded and
 * trimmed; `undefined` when there is none or it is empty. Not printable ASCII: refused (it goes out as an
 * HTTP header). `raw` has CRLF line ends (the relay normalised them).
 */
export function idempotencyKeyOf(raw: Buffer): IdempotencyKey {
  const end = raw.indexOf('\r\n\r\n');
  const headerBlock = (end < 0 ? raw : raw.subarray(0, end)).toString('latin1');
  // Fast path: most messages carry no key.
  if (!/idempotency-key/i.test(headerBlock)) return { ok: true, key: undefined };
  const lines = headerBlock.split('\r\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const colon = line.indexOf(':');
    if (colon <= 0 || line.startsWith(' ') || line.startsWith('\t')) continue;
    if (!IDEMPOTENCY_HEADERS.has(line.slice(0, colon).trim().toLowerCase())) continue;
    let value = line.slice(colon + 1);
    // Folded continuation lines (RFC 5322 §2.2.3): the CRLF goes, the whitespace stays.
    while (i + 1 < lines.length && /^[ \t]/.test(lines[i + 1] as string)) value += lines[++i];
    const key = value.trim();
    if (!/^[\x20-\x7e]*$/.test(key)) return { ok: false };
    return { ok: true, key: key === '' ? undefined : key };
  }
  return { ok: true, key: undefined };
}
