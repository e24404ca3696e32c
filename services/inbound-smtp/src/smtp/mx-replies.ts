// The MX's own replies: one table, each reply with its enhanced status code by the platform's policy
// (@postline/platform's SmtpReply: every reply we make carries ours; smtp-server's automatic ones, which
// follow the reply code only, are off). Where smtp-server used to answer a limit itself (the recipient cap,
// the size), the MX answers it in its hooks with the same words, so that the code is ours too.
import { smtpReply } from '@postline/platform';

export const MX_REPLIES = {
  tooManySessions: (ip: string, max: number) =>
    smtpReply(421, '4.7.0', `Too many connections from ${ip} (at most ${max} at once), try again later`),
  sessionTooLong: smtpReply(421, '4.4.2', 'Session time limit reached, closing connection'),
  /**
   * A domain the MX does not serve: 550 5.7.1, relaying denied, not 5.1.x. The address may well exist
   * elsewhere (our MX named by mistake, or a stale record): a 5.1.x ("bad destination mailbox/system")
   * would have the sending MTA suppress it, a 5.7.1 does not (RFC 3463: x.1 is addressing, x.7 policy; Postfix answers
   * "554 5.7.1 Relay access denied" the same way).
   */
  noSuchDomain: (address: string, host: string, mx: string) =>
    smtpReply(550, '5.7.1', `<${address}>: ${mx} does not accept mail for ${host}`),
  /** A customer's domain whose receiving is not enabled and verified: not served either, so 5.7.1 too. */
  notReceiving: (address: string, host: string, mx: string) =>
    smtpReply(
      550,
      '5.7.1',
      `<${address}>: ${mx} does not accept mail for ${host} (receiving is not enabled and verified for this domain)`,
    ),
  /** A domain we serve (a return path) without that mailbox: the address itself is bad, 5.1.1. */
  noSuchMailbox: (address: string, host: string, mx: string) =>
    smtpReply(
      550,
      '5.1.1',
      `<${address}>: ${mx} does not accept mail for ${host} (no such mailbox at this return-path domain)`,
    ),
  /** Our own host: it takes only the domains' DMARC report addresses (a deleted domain's too are refused). */
  noSuchReportAddress: (address: string, _host: string, mx: string) =>
    smtpReply(550, '5.1.1', `<${address}>: no such mailbox at ${mx} (not the DMARC report address of a domain here)`),
  badAddress: (address: string) => smtpReply(550, '5.1.3', `<${address}>: not a valid recipient address`),
  tooManyRecipients: () => smtpReply(452, '4.5.3', 'Error: too many recipients'),
  lookupFailed: smtpReply(451, '4.3.0', 'Temporary failure looking up the recipient domain, try again later'),
  tooLarge: (max: number) => smtpReply(552, '5.3.4', `Error: message exceeds fixed maximum message size ${max}`),
  storeFailed: smtpReply(451, '4.3.0', 'Temporary failure storing the message, try again later'),
  notReceived: smtpReply(451, '4.3.0', 'Message not received in full'),
  accepted: (id: string | undefined) => smtpReply(250, '2.0.0', id ? `Ok: queued as ${id}` : 'Ok: queued'),
} as const;
