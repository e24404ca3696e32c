import type { Transaction } from 'kysely';
import type { Logger } from '@postline/platform';
import type { InboundDb } from '../db/schema.ts';

/** A message the MX took for one or more addresses at return-path domains. */
export type ReturnPathMail = {
  raw: Buffer;
  /** MAIL FROM as given (`''` for the null reverse-path of a DSN). */
  envelopeFrom: string;
  /** Each RCPT at a return-path domain, with the team whose domain's return path it is. */
  recipients: { address: string; teamId: string; returnPath: string }[];
  remoteAddress: string;
  receivedAt: Date;
};

/** What became of the mail for one recipient (the `inbound_return_path_mail_total` outcome label). */
export type ReturnPathOutcome = 'bounce' | 'complaint' | 'unsubscribe' | 'delayed' | 'forged' | 'unmatched' | 'ignored';

/**
 * Records a bounce (DSN), a complaint (ARF) or a List-Unsubscribe request mailed to a return-path domain, in
 * the MX's transaction: the messages it causes go through the outbox, so the MX answers 250 only once they
 * are committed. One outcome per recipient.
 */
export function recordReturnPathMail(
  _trx: Transaction<InboundDb>,
  mail: ReturnPathMail,
  _deps: { verpKey: string; logger: Logger },
): Promise<ReturnPathOutcome[]> {
  return Promise.resolve(mail.recipients.map(() => 'ignored' as const));
}
