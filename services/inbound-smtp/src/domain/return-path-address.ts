// The mailboxes of a return-path domain (`send.example.com`): the VERP addresses (variable envelope return
// paths, one per recipient) our MTA sends as, where bounces and complaints come back; `unsubscribe`, the
// mailto of broadcasts' List-Unsubscribe (RFC 2369); and `abuse` and `postmaster` (RFC 2142, RFC 5321
// §4.5.1), the addresses a feedback loop (Yahoo, Microsoft JMRP) is enrolled with, whose reports name the
// VERP address inside.

/** The List-Unsubscribe mailbox. */
export const UNSUBSCRIBE_LOCAL_PART = 'unsubscribe';

const REPORT_MAILBOXES = new Set(['abuse', 'postmaster']);

/**
 * The shape of a VERP local part (`b.<email hex>.<position | x>.<tag>`), case-insensitive since MTAs may
 * change the case of a local part. The tag is checked (parseVerp) only once the message is in.
 */
const VERP_LOCAL_PART = /^b\.[0-9a-f]{32}\.(?:0|[1-9]\d{0,8}|x)\.[a-z2-7]{10}$/i;

/** Whether the MX takes mail for this local part at a return-path domain; anything else is refused at RCPT. */
export function acceptsReturnPathLocalPart(local: string): boolean {
  const lower = local.toLowerCase();
  return lower === UNSUBSCRIBE_LOCAL_PART || REPORT_MAILBOXES.has(lower) || VERP_LOCAL_PART.test(lower);
}

/** Whether an address has the shape of one of our VERP addresses (its tag not checked). */
export function looksLikeVerp(address: string): boolean {
  const at = address.lastIndexOf('@');
  return at > 0 && VERP_LOCAL_PART.test(address.slice(0, at));
}

/** The local part of an address, lower-case. */
export function localPartOf(address: string): string {
  const at = address.lastIndexOf('@');
  return (at >= 0 ? address.slice(0, at) : address).toLowerCase();
}

/** The domain of an address, lower-case. */
export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * The unsubscribe token of a List-Unsubscribe mail: the subject the mailto sets is `unsubscribe <token>`
 * (a mail client may prefix it, `Re: `, or quote it). Undefined when there is none; the sender verifies it.
 */
export function unsubscribeToken(subject: string): string | undefined {
  return /(?:^|\s|:)unsubscribe\s+([A-Za-z0-9_-]{1,256}\.[A-Za-z0-9_-]{1,128})(?=$|[\s"'.,;])/i.exec(subject)?.[1];
}
