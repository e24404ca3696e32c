/**
 * An SMTP reply we make ourselves (the inbound MX, the submission relay, the sender's MTA when no server
 * gave one): the basic reply code, the RFC 3463 enhanced status code, and the text. One shape, so a table
 * of replies reads the same in every service, and one policy for which enhanced code a situation gets.
 *
 * The policy:
 * - **Every reply we make carries an enhanced code**, written here, never derived from the basic code.
 *   smtp-server's automatic codes are turned off on our listeners (`hideENHANCEDSTATUSCODES: true`): it
 *   picks them from the basic code alone (550 → 5.1.1 "bad destination mailbox" whatever the cause).
 * - **The class is the basic code's first digit** (2 success, 4 transient, 5 permanent); `smtpReply`
 *   refuses a reply whose two disagree.
 * - **The subject says what failed, as the receiving side will act on it** (RFC 3463 subjects: a
 *   sending MTA suppresses an address on 5.1.x, addressing, and not on 5.7.x, security or policy):
 *   - `2.0.0` every success (a 250 after DATA among them).
 *   - `x.1.x` only what is certain about the address itself: `5.1.1` no such mailbox at a domain we
 *     serve, `5.1.3` an address we cannot take as written, `5.1.2` a recipient domain that does not exist
 *     or has no mail host (the MTA's NXDOMAIN), `5.1.10` a null MX (RFC 7505).
 *   - `x.3.x` our own mail system: `4.3.0` one of our dependencies failed (store, lookup, the gateway: the
 *     client keeps the message and retries), `4.3.2` shutting down, `5.3.4` a message larger than we take.
 *   - `x.4.x` network and routing: `4.4.1` no answer, `4.4.2` connection lost or session time limit,
 *     `4.4.3` DNS failure, `4.4.5` destination busy, `5.4.4` no usable route.
 *   - `x.5.x` protocol: `4.5.3` too many recipients (RFC 5321 §4.5.3.1.10).
 *   - `x.6.x` the message's content: `5.6.0` refused for what it holds, `5.6.7` a non-ASCII address.
 *   - `x.7.x` security and policy: `5.7.1` not authorized, **including a domain we do not serve** (the MX
 *     is not a relay: the address may well exist elsewhere, so never 5.1.x, which would have the sender
 *     suppress it; Postfix's `reject_unauth_destination` answers 554 5.7.1 the same way), `5.7.0` other
 *     policy (authentication required), `5.7.8` bad credentials, `4.7.0` a temporary policy limit (too
 *     many connections or AUTH failures, a rate limit, AUTH not checkable now), `4.7.10` TLS required.
 *
 * @example
 * const tooMany = smtpReply(452, '4.5.3', 'Too many recipients (at most 50 per message)');
 * formatSmtpReply(tooMany); // '452 4.5.3 Too many recipients (at most 50 per message)'
 */
export type SmtpReply = { readonly code: number; readonly enhanced: string; readonly text: string };

const ENHANCED = /^([245])\.(\d{1,3})\.(\d{1,3})$/;

/** A reply of our own; throws when the enhanced code is malformed or its class is not the basic code's. */
export function smtpReply(code: number, enhanced: string, text: string): SmtpReply {
  const match = ENHANCED.exec(enhanced);
  if (!Number.isInteger(code) || code < 200 || code > 599 || !match || match[1] !== String(code)[0]) {
    throw new Error(`SMTP reply ${code} ${enhanced}: the enhanced code's class must be the reply code's first digit`);
  }
  return { code, enhanced, text };
}

/** The reply as sent after the basic code: `4.5.3 Too many recipients` (what smtp-server takes as a text). */
export function smtpReplyText(reply: SmtpReply): string {
  return `${reply.enhanced} ${reply.text}`;
}

/** The whole reply line: `452 4.5.3 Too many recipients`. */
export function formatSmtpReply(reply: SmtpReply): string {
  return `${reply.code} ${smtpReplyText(reply)}`;
}

/** The reply as the Error an SMTP library's hooks take (smtp-server sends `responseCode` and the message). */
export function smtpReplyError(reply: SmtpReply): Error & { responseCode: number } {
  return Object.assign(new Error(smtpReplyText(reply)), { responseCode: reply.code });
}
