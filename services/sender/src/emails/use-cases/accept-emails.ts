// Accepting emails: one statement writes the emails, their recipients and attachments, and the messages
// they cause (email.sent plus one delivery command per recipient domain, or email.scheduled plus the
// scheduler's timer). Nothing is accepted that is not queued, and nothing is queued that is not accepted.
// An email sent under a topic (topic_id) is not sent to the recipients the topic keeps it from: they are
// written suppressed, with email.suppressed saying why, in the same commit.
import type { Kysely, Transaction } from 'kysely';
import { ApiError, newId, outboxRows, type OutboxMessage } from '@postline/platform';
import { claimIdempotencyKey, findAcceptedRequest, type IdempotencyKey } from '../db/accepted-requests.ts';
import {
  insertAcceptedEmails,
  insertRawEmails,
  type AcceptedRows,
  type PositionedRecipient,
  type RawMimeRow,
} from '../db/emails.ts';
import type { EmailRow, SenderDb, SendingDomainRow } from '../../db/schema.ts';
import {
  markTopicSuppressed,
  topicOptOuts,
  withoutOptOuts,
  type TopicOptOut,
  type TopicSubscriptions,
  type TopicSuppressedRecipient,
} from '../../audience/index.ts';
import {
  domainOf,
  envelopeRecipients,
  parseEmailRequest,
  refusalError,
  usesTemplate,
  type EmailRequest,
  type ParseEmailOptions,
} from '../../message/index.ts';
import { renderTemplatedBodies, type TemplatedBody } from '../../templates/index.ts';
import { emailEvent } from '../outbox/email-events.ts';
import { scheduleMessages, sendMessages } from '../outbox/email-messages.ts';
import { checkSender, lookUpSends, SenderRefused, senderRefusal, topicOf, type SendGrant } from './sender-checks.ts';

/** Accepts single emails in groups (createSingleAccepts in single-accepts.ts). */
export type SingleAccepts = { accept: (input: SingleAccept) => Promise<string> };

/** Which API key and which request (the gateway's log of it) sent an email. */
export type RequestOrigin = { apiKeyId: string | null; requestId: string | null };

export type SingleAccept = {
  teamId: string;
  request: EmailRequest;
  grant: SendGrant;
  origin?: RequestOrigin | undefined;
  now: Date;
  /** A raw email's MIME and the rest it brings (accept-raw-email.ts). */
  raw?: RawAccepted;
  /** A raw email's MAIL FROM domain when it differs from its From domain: the team must send from it too. */
  envelopeFromDomain?: string;
};

export type AcceptDeps = { db: Kysely<SenderDb>; now: () => Date; singles: SingleAccepts };

/**
 * POST /emails: checks the body and the team's right to send from its domain, and accepts the email. Without
 * an idempotency key the email is written with the others arriving meanwhile (createSingleAccepts); with
 * one, on its own (acceptEmails).
 */
export async function acceptEmail(
  deps: AcceptDeps,
  input: {
    teamId: string;
    body: unknown;
    idempotencyKey: IdempotencyKey | undefined;
    grant: SendGrant;
    origin?: RequestOrigin | undefined;
  },
): Promise<{ id: string }> {
  const { teamId, idempotencyKey, grant, origin } = input;
  // A send with a template reads it first; one without pays a property check and no query.
  const { body, templateId } = usesTemplate(input.body)
    ? await templatedBody(deps.db, teamId, input.body)
    : { body: input.body, templateId: null };
  const request = withTemplateId(checkedRequest(body, { now: deps.now(), batch: false }), templateId);
  if (idempotencyKey === undefined) {
    // Most requests: written together with the others arriving meanwhile (one statement, one commit).
    try {
      return { id: await deps.singles.accept({ teamId, request, grant, origin, now: deps.now() }) };
    } catch (err) {
      if (err instanceof SenderRefused) throw senderRefusal(err.refusal);
      throw err;
    }
  }
  const { domains, topics } = await lookUpSends(deps.db, [{ teamId, request }]);
  const sender = checkSender(domains(teamId, request.fromDomain), request, grant);
  if (!sender.ok) throw senderRefusal(sender);
  const topic = topicOf(topics, teamId, request);
  if (topic instanceof ApiError) throw topic;
  return acceptEmails(
    deps.db,
    { idempotency: idempotencyKey, emails: [{ request, domain: sender.domain, topic, origin }], now: deps.now() },
    (ids) => ({ id: ids[0] as string }),
  );
}

/** How a batch treats an invalid email: `strict` refuses the whole batch, `permissive` accepts the others. */
export type BatchMode = 'strict' | 'permissive';

export type BatchAnswer =
  | { data: { id: string }[] }
  | { data: { id: string }[]; errors: { index: number; message: string }[] };

/**
 * POST /emails/batch (its list checked by the route): checks every item and the team's right to send
 * from each item's domain, and accepts the valid ones in one statement. Returns the answer and how many
 * emails it accepted.
 */
export async function acceptBatch(
  deps: Pick<AcceptDeps, 'db' | 'now'>,
  input: {
    teamId: string;
    items: readonly unknown[];
    mode: BatchMode;
    idempotencyKey: IdempotencyKey | undefined;
    grant: SendGrant;
    origin?: RequestOrigin | undefined;
  },
): Promise<{ answer: BatchAnswer; accepted: number }> {
  const { teamId, mode, grant, origin } = input;
  const now = deps.now();
  const items = input.items.some(usesTemplate)
    ? await renderTemplatedBodies(deps.db, teamId, input.items)
    : input.items.map((body) => ({ body, templateId: null }));
  const parsed: (EmailRequest | ApiError)[] = items.map((item) => {
    if (item instanceof ApiError) return item;
    const result = parseEmailRequest(item.body, { now, batch: true });
    return result.ok ? withTemplateId(result.request, item.templateId) : refusalError(result.refusal);
  });
  const requests = parsed.filter((item): item is EmailRequest => !(item instanceof ApiError));
  const { domains, topics } = await lookUpSends(
    deps.db,
    requests.map((request) => ({ teamId, request })),
  );

  const accepted: Accepted[] = [];
  const errors: { index: number; message: string }[] = [];
  parsed.forEach((item, index) => {
    let error: ApiError | undefined;
    if (item instanceof ApiError) error = item;
    else {
      const sender = checkSender(domains(teamId, item.fromDomain), item, grant);
      const topic = topicOf(topics, teamId, item);
      if (!sender.ok) error = senderRefusal(sender);
      else if (topic instanceof ApiError) error = topic;
      else accepted.push({ request: item, domain: sender.domain, topic, origin });
    }
    if (!error) return;
    // strict: the first invalid email refuses the whole batch, naming its index.
    if (mode === 'strict') throw new ApiError(error.statusCode, error.name, `emails[${index}]: ${error.message}`);
    errors.push({ index, message: error.message });
  });

  const answer = await acceptEmails(
    deps.db,
    { idempotency: input.idempotencyKey, emails: accepted, now },
    (ids): BatchAnswer =>
      mode === 'strict' ? { data: ids.map((id) => ({ id })) } : { data: ids.map((id) => ({ id })), errors },
  );
  return { answer, accepted: accepted.length };
}

/** A body with its template rendered in, or the public error of why it cannot be. */
async function templatedBody(db: Kysely<SenderDb>, teamId: string, body: unknown): Promise<TemplatedBody> {
  const [rendered] = await renderTemplatedBodies(db, teamId, [body]);
  if (rendered instanceof ApiError) throw rendered;
  return rendered as TemplatedBody; // one body in, one out
}

function withTemplateId(request: EmailRequest, templateId: string | null): EmailRequest {
  return templateId === null ? request : { ...request, templateId };
}

/** The request of a valid body, or the public error of why it is not. */
function checkedRequest(body: unknown, options: ParseEmailOptions): EmailRequest {
  const parsed = parseEmailRequest(body, options);
  if (!parsed.ok) throw refusalError(parsed.refusal);
  return parsed.request;
}

/** An email to accept: its request, its sending domain, and the topic it is sent under (topic_id), read. */
export type Accepted = {
  request: EmailRequest;
  domain: SendingDomainRow;
  topic?: TopicSubscriptions | undefined;
  raw?: RawAccepted;
  origin?: RequestOrigin | undefined;
};

/**
 * What a raw email (message/rfc822) brings besides its request: the id its prepared MIME names in its
 * Message-ID, its recipients (the envelope's, not the request's to, cc and bcc), its Message-ID and the MIME.
 */
export type RawAccepted = { id: string; recipients: string[]; messageId: string; mime: Buffer };

/**
 * Stores the emails and queues their work, and returns the response body `respond` builds from their ids.
 * Everything is one SQL statement (insertAcceptedEmails), so it is atomic without a transaction and costs a
 * single round trip; only when a topic keeps an email from some recipients does a transaction hold it and
 * the statement that marks them suppressed. With an idempotency key, a key this team used within its lifetime returns the stored
 * body instead and writes nothing (the gateway forwards its key so that a request retried after a gateway
 * crash is not sent twice), or, used for another request (the gateway's hash differs), a 409
 * invalid_idempotent_request; an older key is taken anew.
 */
export async function acceptEmails<Body>(
  db: Kysely<SenderDb>,
  input: { idempotency: IdempotencyKey | undefined; emails: readonly Accepted[]; now: Date },
  respond: (ids: string[]) => Body,
): Promise<Body> {
  const idempotencyKey = input.idempotency;
  const { rows, topicSuppressed } = acceptedRows(input.emails, input.now);
  const body = respond(rows.emails.map((email) => email.id));
  const claim = claimIdempotencyKey(idempotencyKey, body, input.now);
  const rawMime: RawMimeRow[] = input.emails.flatMap(({ raw }) => (raw ? [{ email_id: raw.id, mime: raw.mime }] : []));
  const written =
    topicSuppressed.length === 0 && rawMime.length === 0
      ? await insertAcceptedEmails(db, rows, claim)
      : // The accept statement writes every recipient pending: those a topic keeps out are marked in its
        // commit, and a raw email's MIME is written with it.
        await db.transaction().execute(async (trx) => {
          const inserted = await insertAcceptedEmails(trx, rows, claim);
          if (inserted && topicSuppressed.length > 0) await markTopicSuppressed(trx, topicSuppressed, input.now);
          if (inserted) await insertRawEmails(trx, rawMime);
          return inserted;
        });
  if (written || idempotencyKey === undefined) return body;
  const stored = await findAcceptedRequest(db, idempotencyKey);
  // The key was held a moment ago; only the pruner could have taken it since, a day after its use.
  if (!stored) throw new Error('The idempotency key held by this request is gone.');
  if (
    stored.request_hash !== null &&
    idempotencyKey.requestHash !== undefined &&
    stored.request_hash !== idempotencyKey.requestHash
  ) {
    throw new ApiError(
      409,
      'invalid_idempotent_request',
      'Same idempotency key used with a different request payload. Change your idempotency key or payload.',
    );
  }
  return stored.response as Body;
}

/**
 * The rows to write for accepted emails, ids assigned here, with the messages they cause, and the recipients
 * their topics keep them from (to mark suppressed once written).
 */
function acceptedRows(
  accepted: readonly Accepted[],
  now: Date,
): { rows: AcceptedRows; topicSuppressed: TopicSuppressedRecipient[] } {
  const addressesOfEmail = accepted.map(({ request, raw }) => raw?.recipients ?? envelopeRecipients(request));
  const optOutsOfEmail = accepted.map(({ topic }, i) => topicOptOuts(topic, addressesOfEmail[i] as string[]));
  const emails: EmailRow[] = accepted.map(({ request, domain, raw, origin }, i) =>
    // A send that skips some recipients at once has their email.suppressed as its last event so far.
    emailRowOf(request, domain, now, {
      id: raw?.id,
      messageId: raw?.messageId,
      origin,
      suppressedAtOnce: (optOutsOfEmail[i] as TopicOptOut[]).length > 0,
    }),
  );
  const recipientsOfEmail = emails.map((email, i) => recipientRowsOf(email, addressesOfEmail[i] as string[]));
  const attachments = accepted.flatMap(({ request }, i) =>
    request.attachments.map((attachment, position) => ({
      id: newId(),
      email_id: (emails[i] as EmailRow).id,
      position,
      filename: attachment.filename,
      content_type: attachment.contentType,
      content_id: attachment.contentId,
      content: attachment.content,
    })),
  );
  const outbox = outboxRows(
    emails.flatMap((email, i): OutboxMessage[] => {
      const optOuts = optOutsOfEmail[i] as TopicOptOut[];
      const toSend = withoutOptOuts(recipientsOfEmail[i] as PositionedRecipient[], optOuts);
      const messages = email.scheduled_at ? scheduleMessages(email, email.scheduled_at) : sendMessages(email, toSend);
      return optOuts.length === 0 ? messages : [...messages, ...topicSuppressedEvents(email, optOuts)];
    }),
  );
  const topicSuppressed = emails.flatMap((email, i) =>
    (optOutsOfEmail[i] as TopicOptOut[]).map((optOut) => ({
      emailId: email.id,
      position: optOut.position,
      reason: optOut.reason,
    })),
  );
  return { rows: { emails, recipients: recipientsOfEmail.flat(), attachments, outbox }, topicSuppressed };
}

/**
 * The row of an accepted email: queued, or scheduled when the request says when. `suppressedAtOnce`: a topic
 * keeps it from some recipients, whose email.suppressed is its last event so far.
 */
export function emailRowOf(
  request: EmailRequest,
  domain: Pick<SendingDomainRow, 'team_id' | 'domain_id'>,
  now: Date,
  opts: {
    id?: string | undefined;
    messageId?: string | undefined;
    origin?: RequestOrigin | undefined;
    suppressedAtOnce?: boolean;
  } = {},
): EmailRow {
  const id = opts.id ?? newId();
  const scheduled = request.scheduledAt !== null;
  return {
    id,
    team_id: domain.team_id,
    domain_id: domain.domain_id,
    from_header: request.fromHeader,
    from_address: request.from.address,
    from_domain: request.fromDomain,
    to_addresses: request.to,
    cc_addresses: request.cc,
    bcc_addresses: request.bcc,
    reply_to: request.replyTo,
    subject: request.subject,
    html: request.html,
    text: request.text,
    headers: request.headers,
    tags: request.tags,
    message_id: opts.messageId ?? `<${id}@${request.fromDomain}>`,
    status: scheduled ? 'scheduled' : 'queued',
    last_event: scheduled ? 'scheduled' : opts.suppressedAtOnce ? 'suppressed' : 'sent',
    scheduled_at: request.scheduledAt,
    created_at: now,
    broadcast_id: null,
    template_id: request.templateId ?? null,
    topic_id: request.topicId,
    api_key_id: opts.origin?.apiKeyId ?? null,
    request_id: opts.origin?.requestId ?? null,
  };
}

/** An email's recipient rows, in the order of its envelope's addresses. */
function recipientRowsOf(email: EmailRow, addresses: readonly string[]): AcceptedRows['recipients'] {
  return addresses.map((address, position) => ({
    email_id: email.id,
    position,
    team_id: email.team_id,
    address,
    domain: domainOf(address),
  }));
}

/**
 * Writes an email the platform sends now on a team's behalf (a form's confirmation, a broadcast's test
 * copy), in the caller's transaction: the email, its recipients and its messages (email.sent and the
 * delivery commands), as the accept statement writes any other, without an idempotency key or
 * attachments. The request must be checked already, its from domain the team's. Returns the email's id.
 */
export async function writeEmailNow(
  trx: Transaction<SenderDb>,
  request: EmailRequest,
  domain: Pick<SendingDomainRow, 'team_id' | 'domain_id'>,
  now: Date,
): Promise<string> {
  const email = emailRowOf({ ...request, scheduledAt: null }, domain, now);
  const recipients = recipientRowsOf(email, envelopeRecipients(request));
  const written = await insertAcceptedEmails(
    trx,
    { emails: [email], recipients, attachments: [], outbox: outboxRows(sendMessages(email, recipients)) },
    claimIdempotencyKey(undefined, null, now),
  );
  if (!written) throw new Error('The email was not written.');
  return email.id;
}

/**
 * email.suppressed for the recipients a topic keeps the email from, one per reason as for the suppression
 * list, of type `Suppressed` (not `OnAccountSuppressionList`: the address is not on the team's list).
 */
function topicSuppressedEvents(email: EmailRow, optOuts: readonly TopicOptOut[]): OutboxMessage[] {
  return [...new Set(optOuts.map((optOut) => optOut.reason))].map((reason) =>
    emailEvent(
      'email.suppressed',
      email,
      optOuts.filter((optOut) => optOut.reason === reason).map((optOut) => optOut.address),
      { suppressed: { message: reason, type: 'Suppressed' } },
    ),
  );
}
