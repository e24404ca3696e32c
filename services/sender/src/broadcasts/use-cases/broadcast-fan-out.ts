// A queued broadcast becomes emails, one page of its segment's contacts per `sender.fan-out-broadcast`
// command. Each page is one transaction that locks the broadcast, reads the next contacts after its cursor
// (minus unsubscribed, topic opt-outs), writes one personalised email per contact through the accept
// statement of POST /emails (with its email.sent and delivery command), records each contact in
// broadcast_recipients (a contact on the suppression list gets an unsent email, marked suppressed with its
// email.suppressed, and is recorded without it), advances the
// cursor and puts the next page's command in the outbox, or marks the broadcast sent after the last page.
// A crash mid-page rolls the page back and the redelivered command does it again; a command that is not
// for the cursor's page (a duplicate) changes nothing; the recipients' primary key refuses a second email
// to a contact whatever happens. A canceled broadcast stops at its next page.
import type { Transaction } from 'kysely';
import { enqueue, newId, outboxRows, type OutboxMessage } from '@postline/platform';
import {
  findFanOutPage,
  insertBroadcastRecipients,
  type BroadcastRecipientRow,
  type BroadcastTopic,
  type FanOutContact,
} from '../db/broadcast-recipients.ts';
import {
  claimIdempotencyKey,
  insertAcceptedEmails,
  type AcceptedRows,
  checkSender,
  emailEvent,
  sendMessages,
} from '../../emails/index.ts';
import { lockBroadcast, updateBroadcast } from '../db/broadcasts.ts';
import {
  findPropertyDefinitions,
  findTopic,
  markTopicSuppressed,
  type PropertyDefinition,
  type TopicSuppressedRecipient,
} from '../../audience/index.ts';
import type { BroadcastRow, EmailRow, SenderDb, SendingDomainRow } from '../../db/schema.ts';
import { findSendingDomains } from '../../sending-domains/index.ts';
import {
  checkBroadcastMessage,
  FAN_OUT_PAGE_CONTACTS,
  personaliseBroadcast,
  unsubscribeHeaders,
} from '../domain/broadcast-emails.ts';
import { type EmailRequest, domainOf } from '../../message/index.ts';
import { unsubscribeUrl, type UnsubscribeSigner } from '../../engagement/index.ts';
import { fanOutCommand, messageOf } from './broadcasts.ts';

export type FanOutDeps = {
  unsubscribe: UnsubscribeSigner;
  /** PUBLIC_BASE_URL: where the unsubscribe links are served (through the gateway). */
  publicBaseUrl: string;
  now: () => Date;
  /** Contacts per page (FAN_OUT_PAGE_CONTACTS). */
  pageContacts?: number;
  /** DEV_INBOX: a domain the team has added may send before it is verified. */
  devInbox?: boolean;
};

/** What a page did: nothing (a stale or stopped command), a page with more to come, or the last page. */
/**
 * What a command did: nothing (`skipped`: canceled, sent, or a page already done), a page with another to
 * come, the last page, or stopped the broadcast (canceled, with why) because it can no longer be sent.
 */
export type FanOutOutcome = 'skipped' | 'page' | 'finished' | { stopped: string };

/** Makes the emails of the page of the team's broadcast after contact id `after` (see the file's comment). */
export async function fanOutBroadcastPage(
  trx: Transaction<SenderDb>,
  deps: FanOutDeps,
  teamId: string,
  broadcastId: string,
  after: string | null,
): Promise<FanOutOutcome> {
  const broadcast = await lockBroadcast(trx, teamId, broadcastId);
  // Canceled, sent, or a command for a page already done.
  if (!broadcast || broadcast.status !== 'queued' || broadcast.fan_out_after !== after) return 'skipped';
  const now = deps.now();
  // Checked again on every page: the message may have been edited while scheduled, and its domain deleted
  // or unverified since; the emails of earlier pages were accepted while it was sendable.
  const checked = checkBroadcastMessage(messageOf(broadcast), now);
  if (!checked.ok) return stop(trx, broadcast, checked.refusal.message);
  const domains = await findSendingDomains(trx, [{ teamId, name: checked.request.fromDomain }]);
  const sender = checkSender(domains(teamId, checked.request.fromDomain), checked.request, {
    members: [],
    devInbox: deps.devInbox ?? false,
    whilePaused: true,
  });
  if (!sender.ok) return stop(trx, broadcast, sender.message);
  const { domain } = sender;

  const limit = deps.pageContacts ?? FAN_OUT_PAGE_CONTACTS;
  const topic = await topicOf(trx, broadcast);
  const contacts =
    broadcast.segment_id === null || topic === 'gone'
      ? []
      : await findFanOutPage(trx, { teamId, segmentId: broadcast.segment_id, topic, after, limit, now });
  const properties = contacts.length === 0 ? [] : await findPropertyDefinitions(trx, teamId);

  const page = pageRows({ broadcast, request: checked.request, domain, properties, deps, now }, contacts);
  await insertBroadcastRecipients(trx, page.recipients);
  if (page.emails.emails.length > 0)
    await insertAcceptedEmails(trx, page.emails, claimIdempotencyKey(undefined, null, now));
  if (page.suppressed.length > 0) await markTopicSuppressed(trx, page.suppressed, now);

  const last = contacts.at(-1)?.id ?? after;
  if (contacts.length === limit) {
    await updateBroadcast(trx, broadcast.team_id, broadcast.id, { fan_out_after: last });
    await enqueue(trx, [fanOutCommand(broadcast, last)]);
    return 'page';
  }
  await updateBroadcast(trx, broadcast.team_id, broadcast.id, { fan_out_after: last, status: 'sent', sent_at: now });
  return 'finished';
}

/** Cancels a broadcast that can no longer be sent, in the page's transaction, and says why. */
async function stop(trx: Transaction<SenderDb>, broadcast: BroadcastRow, why: string): Promise<FanOutOutcome> {
  await updateBroadcast(trx, broadcast.team_id, broadcast.id, { status: 'canceled' });
  return { stopped: why };
}

/** The broadcast's topic, null without one, or `gone` when it was deleted (then no one is sent to). */
async function topicOf(trx: Transaction<SenderDb>, broadcast: BroadcastRow): Promise<BroadcastTopic | null | 'gone'> {
  if (broadcast.topic_id === null) return null;
  const topic = await findTopic(trx, broadcast.team_id, broadcast.topic_id);
  return topic ? { id: topic.id, defaultSubscription: topic.default_subscription } : 'gone';
}

type PageContext = {
  broadcast: BroadcastRow;
  request: EmailRequest;
  domain: SendingDomainRow;
  properties: readonly PropertyDefinition[];
  deps: FanOutDeps;
  now: Date;
};

/**
 * The emails (with their outbox messages) and the recipient rows of a page's contacts. A contact on the
 * suppression list gets an email that is not sent: its recipient is marked suppressed (`suppressed`, once
 * written) and email.suppressed says why; its broadcast_recipients row names no email, as it was not sent.
 */
function pageRows(
  context: PageContext,
  contacts: Awaited<ReturnType<typeof findFanOutPage>>,
): { emails: AcceptedRows; recipients: BroadcastRecipientRow[]; suppressed: TopicSuppressedRecipient[] } {
  const { broadcast, request, domain, properties, deps, now } = context;
  const emails: EmailRow[] = [];
  const recipients: BroadcastRecipientRow[] = [];
  const emailRecipients: AcceptedRows['recipients'] = [];
  const outbox: OutboxMessage[] = [];
  const suppressed: TopicSuppressedRecipient[] = [];
  for (const contact of contacts) {
    const token = deps.unsubscribe.sign({
      teamId: broadcast.team_id,
      contactId: contact.id,
      broadcastId: broadcast.id,
    });
    const url = unsubscribeUrl(deps.publicBaseUrl, token);
    const message = personaliseBroadcast(messageOf(broadcast), contact, properties, url);
    const id = newId();
    const recipientDomain = domainOf(contact.email);
    const address = `${contact.email.slice(0, contact.email.lastIndexOf('@'))}@${recipientDomain}`;
    const email: EmailRow = {
      id,
      team_id: broadcast.team_id,
      domain_id: domain.domain_id,
      from_header: request.fromHeader,
      from_address: request.from.address,
      from_domain: request.fromDomain,
      to_addresses: [contact.email],
      cc_addresses: [],
      bcc_addresses: [],
      reply_to: request.replyTo,
      subject: message.subject,
      html: message.html,
      text: message.text,
      headers: unsubscribeHeaders(url, domain.return_path, token),
      tags: [],
      message_id: `<${id}@${request.fromDomain}>`,
      status: 'queued',
      last_event: contact.suppressed ? 'suppressed' : 'sent',
      scheduled_at: null,
      created_at: now,
      broadcast_id: broadcast.id,
      template_id: null,
      topic_id: broadcast.topic_id,
      api_key_id: null,
      request_id: null,
    };
    const recipient = { email_id: id, position: 0, team_id: broadcast.team_id, address, domain: recipientDomain };
    emails.push(email);
    emailRecipients.push(recipient);
    const row = { id: newId(), broadcast_id: broadcast.id, contact_id: contact.id, team_id: broadcast.team_id };
    if (contact.suppressed) {
      const event = suppressionListEvent(email, contact.suppressed_origin);
      outbox.push(event.message);
      suppressed.push({ emailId: id, position: 0, reason: event.reason });
      recipients.push({ ...row, email: contact.email, email_id: null });
    } else {
      outbox.push(...sendMessages(email, [recipient]));
      recipients.push({ ...row, email: contact.email, email_id: id });
    }
  }
  return {
    emails: { emails, recipients: emailRecipients, attachments: [], outbox: outboxRows(outbox) },
    recipients,
    suppressed,
  };
}

/** email.suppressed for a contact on the suppression list, as a delivery attempt would say it. */
function suppressionListEvent(
  email: EmailRow,
  origin: FanOutContact['suppressed_origin'],
): { message: OutboxMessage; reason: string } {
  const reason = origin === 'bounce' ? 'previous_bounce' : origin === 'complaint' ? 'previous_complaint' : undefined;
  const text =
    reason === undefined
      ? 'The recipient is on your suppression list, so the email was not sent to it.'
      : 'The recipient is on your suppression list because of an earlier bounce or complaint, so the email was not sent to it.';
  return {
    message: emailEvent('email.suppressed', email, email.to_addresses, {
      suppressed: { message: text, type: 'OnAccountSuppressionList', ...(reason === undefined ? {} : { reason }) },
    }),
    reason: text,
  };
}
