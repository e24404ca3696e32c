// The MX's own replies: one table of codes and texts. smtp-server prefixes the enhanced status code from
// the reply code (550 → 5.1.1, 451 → 4.3.0, 421 → 4.4.2) and, for the limits it enforces
// itself, from the limit (452 4.5.3 past maxRecipients, 552 5.3.4 past the size); a refusal at connect
// carries none, so ours is written out.

/** An error smtp-server turns into the reply `code text`. */
export type SmtpReply = Error & { responseCode: number };

export function smtpReply(code: number, text: string): SmtpReply {
  return Object.assign(new Error(text), { responseCode: code });
}

export const MX_REPLIES = {
  tooManySessions: (ip: string, max: number) =>
    smtpReply(421, `4.7.0 Too many connections from ${ip} (at most ${max} at once), try again later`),
  sessionTooLong: { code: 421, text: 'Session time limit reached, closing connection' },
  noSuchDomain: (address: string, host: string, mx: string) =>
    smtpReply(550, `<${address}>: ${mx} does not accept mail for ${host}`),
  notReceiving: (address: string, host: string, mx: string) =>
    smtpReply(
      550,
      `<${address}>: ${mx} does not accept mail for ${host} (receiving is not enabled and verified for this domain)`,
    ),
  noSuchMailbox: (address: string, host: string, mx: string) =>
    smtpReply(550, `<${address}>: ${mx} does not accept mail for ${host} (no such mailbox at this return-path domain)`),
  badAddress: (address: string) => smtpReply(550, `<${address}>: not a valid recipient address`),
  lookupFailed: () => smtpReply(451, 'Temporary failure looking up the recipient domain, try again later'),
  tooLarge: (max: number) => smtpReply(552, `Message exceeds the maximum size of ${max} bytes`),
  storeFailed: () => smtpReply(451, 'Temporary failure storing the message, try again later'),
  accepted: (id: string | undefined) => (id ? `Ok: queued as ${id}` : 'Ok: queued'),
} as const;
