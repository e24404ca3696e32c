// What the MX does with a message once DATA is in: one transaction holding everything it causes, so that the
// 250 the MX answers after the commit means nothing can be lost (RFC 5321 §6.1: a 250 accepts responsibility).
import type { Kysely } from 'kysely';
import { newId, outboxRows, type Logger, type OutboxMessage } from '@postline/platform';
import type { AuthVerdicts } from '../domain/authentication-verdicts.ts';
import {
  receivedFields,
  storable,
  type ParsedAttachment,
  type ParsedMessage,
  type SessionFacts,
} from '../domain/received-message.ts';
import { insertReceivedMessage, type ReceivedMessageRows } from '../db/received-emails.ts';
import type { InboundDb } from '../db/schema.ts';
import type { ReadReport } from '../domain/dmarc-report-reading.ts';
import { recordDmarcReports, type DmarcOutcome, type DmarcRecipient } from './dmarc-reports.ts';
import { recordReturnPathMail, type ReturnPathOutcome } from './return-path-mail.ts';

/** A message the MX took, with its recipients as routed at RCPT. */
export type IncomingMessage = {
  /** As received, bare CR and LF already normalised to CRLF. */
  raw: Buffer;
  session: SessionFacts;
  /** The RCPT addresses at each team's receiving domains, in RCPT order. */
  received: { teamId: string; addresses: string[] }[];
  /** The RCPT addresses at return-path domains. */
  returnPath: { address: string; teamId: string; returnPath: string }[];
  /** The domains whose DMARC report address (`dmarc+<domain id>@<INBOUND_MX_HOST>`) is among the RCPTs, once each. */
  dmarcReports: DmarcRecipient[];
  receivedAt: Date;
};

export type ReceiveDeps = {
  db: Kysely<InboundDb>;
  parse: (raw: Buffer) => Promise<ParsedMessage>;
  authenticate: (raw: Buffer, session: SessionFacts) => Promise<AuthVerdicts>;
  verpKey: string;
  /** Our MX host: the domain of a Message-ID we make for a message without one. */
  mxHost: string;
  /**
   * A report message's files read into reports, off the event loop (a report of 20,000 records takes seconds
   * to read): message-parsing/dmarc-report-reader.ts.
   */
  readDmarcReports: (attachments: readonly ParsedAttachment[]) => Promise<ReadReport[]>;
  logger: Logger;
};

export type Received = { emailIds: string[]; returnPathOutcomes: ReturnPathOutcome[]; dmarcOutcomes: DmarcOutcome[] };

/**
 * Records a received message: for each team among its recipients a received email (its parse, its
 * attachments, `received_for` = that team's RCPT addresses) and its `email.received` event, all sharing one
 * stored raw message; the return-path recipients' mail (bounces, complaints); and the DMARC aggregate
 * reports sent to the domains' report addresses (never a received email). Parsing and the DNS
 * lookups of the authentication checks happen before the transaction opens. Throws when the transaction
 * fails (the MX answers 451 and the client retries).
 */
export async function receiveMessage(deps: ReceiveDeps, message: IncomingMessage): Promise<Received> {
  let rows: ReceivedMessageRows | undefined;
  let events: OutboxMessage[] = [];
  let dmarcReports: ReadReport[] = [];
  if (message.received.length > 0 || message.dmarcReports.length > 0) {
    const [parsed, verdicts] = await Promise.all([
      deps.parse(message.raw),
      message.received.length > 0 ? deps.authenticate(message.raw, message.session) : undefined,
    ]);
    if (parsed.error)
      deps.logger.info(
        { err: parsed.error, bytes: message.raw.length },
        'received message stored raw: the MIME parser gave up',
      );
    if (verdicts) ({ rows, events } = receivedRows(deps, message, parsed, verdicts));
    // A report is checked by its content and the address it came to, not by the message's DKIM or SPF: a
    // receiver's report mail is often unsigned, and a forged report can only add figures to a domain's own.
    if (message.dmarcReports.length > 0) dmarcReports = await deps.readDmarcReports(parsed.attachments);
  }
  const emailIds = rows?.emails.map((email) => email.id) ?? [];
  if (message.returnPath.length === 0 && message.dmarcReports.length === 0) {
    // One statement: atomic without a transaction of its own.
    if (rows) await insertReceivedMessage(deps.db, rows, outboxRows(events));
    return { emailIds, returnPathOutcomes: [], dmarcOutcomes: [] };
  }
  return deps.db.transaction().execute(async (trx) => {
    if (rows) await insertReceivedMessage(trx, rows, outboxRows(events));
    const returnPathOutcomes =
      message.returnPath.length === 0
        ? []
        : await recordReturnPathMail(
            trx,
            {
              raw: message.raw,
              envelopeFrom: message.session.mailFrom,
              recipients: message.returnPath,
              remoteAddress: message.session.ip,
              receivedAt: message.receivedAt,
            },
            { verpKey: deps.verpKey, logger: deps.logger },
          );
    const dmarcOutcomes =
      message.dmarcReports.length === 0
        ? []
        : await recordDmarcReports(
            trx,
            {
              reports: dmarcReports,
              recipients: message.dmarcReports,
              receivedAt: message.receivedAt,
              remoteAddress: message.session.ip,
            },
            deps.logger,
          );
    return { emailIds, returnPathOutcomes, dmarcOutcomes };
  });
}

/** The rows of one received message and the `email.received` event of each of its emails. */
function receivedRows(
  deps: ReceiveDeps,
  message: IncomingMessage,
  parsed: ParsedMessage,
  verdicts: AuthVerdicts,
): { rows: ReceivedMessageRows; events: OutboxMessage[] } {
  const rawId = newId();
  const rows: ReceivedMessageRows = {
    raw: { id: rawId, content: message.raw, size: message.raw.length, received_at: message.receivedAt },
    emails: [],
    attachments: [],
  };
  const events: OutboxMessage[] = [];
  for (const { teamId, addresses } of message.received) {
    const id = newId();
    const fields = receivedFields(parsed, `<${id}@${deps.mxHost}>`);
    rows.emails.push({
      id,
      team_id: teamId,
      raw_id: rawId,
      created_at: message.receivedAt,
      envelope_from: message.session.mailFrom,
      received_for: addresses,
      remote_address: message.session.ip,
      helo: message.session.helo,
      message_id: fields.messageId,
      from_address: fields.from,
      to_addresses: fields.to,
      cc_addresses: fields.cc,
      bcc_addresses: fields.bcc,
      reply_to_addresses: fields.replyTo,
      subject: fields.subject,
      html: fields.html,
      text: fields.text,
      headers: fields.headers,
      spf: verdicts.spf,
      dkim: verdicts.dkim,
      dmarc: verdicts.dmarc,
      parse_error: parsed.error === null ? null : storable(parsed.error),
    });
    const attachments = parsed.attachments.map((attachment, position) => ({
      id: newId(),
      email_id: id,
      position,
      filename: attachment.filename === null ? null : storable(attachment.filename),
      content_type: storable(attachment.contentType),
      content_disposition: attachment.contentDisposition === null ? null : storable(attachment.contentDisposition),
      content_id: attachment.contentId === null ? null : storable(attachment.contentId),
      size: attachment.content.length,
      content: attachment.content,
    }));
    rows.attachments.push(...attachments);
    events.push({
      exchange: 'events',
      type: 'email.received',
      team_id: teamId,
      data: {
        email_id: id,
        created_at: message.receivedAt.toISOString(),
        from: fields.from,
        to: fields.to,
        bcc: fields.bcc,
        cc: fields.cc,
        received_for: addresses,
        message_id: fields.messageId,
        subject: fields.subject,
        attachments: attachments.map((attachment) => ({
          id: attachment.id,
          filename: attachment.filename,
          content_type: attachment.content_type,
          content_disposition: attachment.content_disposition,
          content_id: attachment.content_id,
        })),
      },
    });
  }
  return { rows, events };
}
