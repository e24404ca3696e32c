// The reply behind a slowdown or hold as every team may read it (the shaping view, and the deferral of other
// mail to the provider). The reply was given for one recipient of
// one team and may name it (`450 4.7.1 <bob@acme.com>: Recipient address rejected`) or name the sender
// (`<news@teamb.example>: Sender address rejected`): the view keeps the codes and the provider's words, and
// drops what names a mailbox. Both functions give back what they are given already cleaned, so a reply is
// cleaned when written and again when shown (rows written by a process of an older version).

/** Text inside angle brackets: an address in a reply (`<bob@acme.com>`) or an envelope. */
const BRACKETED = /<[^<>]+>/g;
/** Anything like an address: a local part (plain or quoted) or none, `@`, a domain (or `[address literal]`). */
const ADDRESS = /(?:"[^"\r\n]*"|[^\s<>()[\]{}"',;:@]+)?@(?:\[[^\]\s]*\]|[^\s<>()[\]{}"',;:@]+)/g;

/**
 * The reply with every address and bracketed text replaced by `…`; its codes and the provider's words kept.
 *
 * @example
 * sanitizeReply('450 4.7.1 <bob@acme.com>: Recipient address rejected: Greylisted')
 * // '450 4.7.1 <…>: Recipient address rejected: Greylisted'
 */
export function sanitizeReply(reply: string): string {
  return reply.replace(BRACKETED, '<…>').replace(ADDRESS, (address) => (address.endsWith('.') ? '….' : '…')); // a sentence's full stop kept
}

/** `10 deferrals in a row, the last: ` (the shaper's pushback after many deferrals): says no more than it. */
const DEFERRALS = /^\d+ deferrals in a row\b[^:]*:\s*/;
/** A reply code, and the enhanced status code after it when there is one (RFC 3463). */
const CODES = /^([2-5]\d\d)(?:[ -]([245]\.\d{1,3}\.\d{1,3})(?=[\s:;,.]|$))?/;

/**
 * The reply's codes alone (another mail server's reply may name its company or its users anywhere in its
 * text); null when it does not start with a reply code.
 *
 * @example
 * replyCodesOf('10 deferrals in a row, the last: 452 4.2.2 <x@y> mailbox full')
 * // '10 deferrals in a row, the last: 452 4.2.2'
 */
export function replyCodesOf(reply: string): string | null {
  const prefix = DEFERRALS.exec(reply)?.[0] ?? '';
  const codes = CODES.exec(reply.slice(prefix.length).trimStart());
  if (!codes) return null;
  return `${prefix}${codes[1]}${codes[2] ? ` ${codes[2]}` : ''}`;
}
