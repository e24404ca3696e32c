// Mail to return-path domains: bounces (DSN, RFC 3464) and complaints (ARF, RFC 5965) become the
// `internal.email.feedback` the sender turns into email.bounced / email.complained and suppressions; a
// List-Unsubscribe mail becomes `internal.contact.unsubscribe-mail`. Everything commits in the MX's
// transaction, with a row per message and RCPT that makes the MX's redelivery of a message harmless.
import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import { enqueue, newId, type Logger, type OutboxMessage } from '@postline/platform';
import { findReturnPathOutcome, insertReturnPathMail, isTeamReturnPath } from '../db/return-path-mail.ts';
import type { InboundDb } from '../db/schema.ts';
import { domainOf } from '../domain/return-path-address.ts';
import {
  decideReturnPathMail,
  readReturnPathMail,
  verpCandidate,
  type ReadMail,
  type ReturnPathDecision,
  type ReturnPathOutcome,
} from '../domain/return-path-report.ts';

export type { ReturnPathOutcome };

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

/** Outcomes that drop the message for what it claims to be: logged (never its body) for an operator. */
const DROPPED: ReadonlySet<ReturnPathOutcome> = new Set(['forged', 'unmatched']);

/**
 * Records a bounce (DSN), a complaint (ARF) or a List-Unsubscribe request mailed to a return-path domain, in
 * the MX's transaction: the messages it causes go through the outbox, so the MX answers 250 only once they
 * are committed. One outcome per recipient. A message already recorded for a recipient (the MX's client
 * sending it again after a lost 250) answers the outcome recorded and causes nothing more.
 */
export async function recordReturnPathMail(
  trx: Transaction<InboundDb>,
  mail: ReturnPathMail,
  deps: { verpKey: string; logger: Logger },
): Promise<ReturnPathOutcome[]> {
  const read = readReturnPathMail(mail.raw);
  const sha256 = createHash('sha256').update(mail.raw).digest();
  const outcomes: ReturnPathOutcome[] = [];
  for (const recipient of mail.recipients) {
    const address = recipient.address.toLowerCase();
    const decision = await decide(trx, read, { ...recipient, address }, mail.envelopeFrom, deps.verpKey);
    const messages = messagesOf(decision, recipient.teamId);
    const written = await insertReturnPathMail(trx, {
      id: newId(),
      team_id: recipient.teamId,
      received_at: mail.receivedAt,
      recipient: address,
      message_sha256: sha256,
      envelope_from: textOnly(mail.envelopeFrom),
      remote_address: mail.remoteAddress,
      outcome: decision.outcome,
      email_id: decision.emailId,
      detail: decision.detail,
      feedback_count: decision.feedback.length,
      excerpt: textOnly(read.excerpt),
    });
    if (!written) {
      outcomes.push((await findReturnPathOutcome(trx, sha256, address)) ?? decision.outcome);
      continue;
    }
    await enqueue(trx, messages);
    if (DROPPED.has(decision.outcome)) {
      deps.logger.info(
        {
          recipient: address,
          outcome: decision.outcome,
          detail: decision.detail,
          envelopeFrom: mail.envelopeFrom,
          remoteAddress: mail.remoteAddress,
        },
        'return-path mail dropped',
      );
    }
    outcomes.push(decision.outcome);
  }
  return outcomes;
}

/** The decision for one recipient, once the domain of a VERP address found inside a report is checked. */
async function decide(
  trx: Transaction<InboundDb>,
  read: ReadMail,
  recipient: ReturnPathMail['recipients'][number],
  envelopeFrom: string,
  verpKey: string,
): Promise<ReturnPathDecision> {
  const candidate = verpCandidate(read, recipient);
  const teamReturnPaths = new Set<string>();
  if (candidate) {
    const domain = domainOf(candidate);
    if (domain !== recipient.returnPath && (await isTeamReturnPath(trx, recipient.teamId, domain)))
      teamReturnPaths.add(domain);
  }
  return decideReturnPathMail(read, recipient, { verpKey, teamReturnPaths, envelopeFrom });
}

function messagesOf(decision: ReturnPathDecision, teamId: string): OutboxMessage[] {
  const messages: OutboxMessage[] = decision.feedback.map((data) => ({
    exchange: 'events',
    type: 'internal.email.feedback',
    team_id: teamId,
    data,
  }));
  if (decision.unsubscribe) {
    messages.push({
      exchange: 'events',
      type: 'internal.contact.unsubscribe-mail',
      team_id: teamId,
      data: decision.unsubscribe,
    });
  }
  return messages;
}

/** Postgres text holds no NUL character. */
function textOnly(value: string): string {
  return value.replaceAll('\u0000', '');
}
