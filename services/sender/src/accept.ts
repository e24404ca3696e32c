// Accepting emails: one statement writes the emails, their recipients and attachments, and the messages
// they cause (email.sent plus one delivery command per recipient domain, or email.scheduled plus the
// scheduler's timer). Nothing is accepted that is not queued, and nothing is queued that is not accepted.
import { sql, type Kysely, type Transaction } from 'kysely';
import { ApiError, createBatcher, newId, NOTIFY_RELAY, outboxRows, outboxSource, PREPARED, timerMessage, type OutboxMessage } from '@postline/platform';
import type { EmailRow, SenderDb, SendingDomainRow } from './db/schema.ts';
import type { EmailRequest } from './domain/email-request.ts';
import { domainOf, envelopeRecipients, groupByDomain } from './domain/recipients.ts';
import { emailEvent } from './events.ts';

/** The scheduler timer that sends a scheduled email. */
export function sendTimerKey(emailId: string): string {
  return `email-send:${emailId}`;
}

/**
 * Why this team may not send `request` (the message of a 403 `validation_error`), given the team's domain
 * named by its from address (if any), or the domain it sends from. A key limited to one domain
 * (`keyDomainId`) may send only from that domain.
 */
export function checkSender(
  domain: SendingDomainRow | undefined,
  request: EmailRequest,
  keyDomainId: string | undefined,
): { ok: true; domain: SendingDomainRow } | { ok: false; message: string } {
  if (!domain || !domain.sending_verified) {
    return {
      ok: false,
      message: `The ${request.fromDomain} domain is not verified. Please, add and verify your domain on the /domains API.`,
    };
  }
  if (keyDomainId !== undefined && domain.domain_id !== keyDomainId) {
    return { ok: false, message: `This API key can only send from its own domain, not from ${request.fromDomain}.` };
  }
  return { ok: true, domain };
}

/** Looks up a sending domain by its team and name. */
export type DomainLookup = (teamId: string, name: string) => SendingDomainRow | undefined;

/** The sending domains these (team, name) pairs name, of any number of teams, in one query. */
export async function findSendingDomains(db: Kysely<SenderDb>, wanted: readonly { teamId: string; name: string }[]): Promise<DomainLookup> {
  const key = (teamId: string, name: string) => `${teamId} ${name}`;
  // A batch names the same domain many times: ask for each pair once, not one joined row per email.
  const pairs = [...new Map(wanted.map((w) => [key(w.teamId, w.name), w])).values()];
  if (pairs.length === 0) return () => undefined;
  const { rows } = await sql<SendingDomainRow>`select ${PREPARED} d.* from sending_domains d
    join unnest(${pairs.map((w) => w.teamId)}::uuid[], ${pairs.map((w) => w.name)}::text[]) as q (team_id, name)
      on d.team_id = q.team_id and d.name = q.name
    where not d.deleted`.execute(db);
  const byKey = new Map(rows.map((row) => [key(row.team_id, row.name), row]));
  return (teamId, name) => byKey.get(key(teamId, name));
}

export type Accepted = { request: EmailRequest; domain: SendingDomainRow };

/**
 * Stores the emails and queues their work, and returns the response body `respond` builds from their ids.
 * Everything is one SQL statement (data-modifying CTEs), so it is atomic without a transaction and costs a
 * single round trip. With an idempotency key, a key this team used in the last 24 hours returns the stored
 * body instead and writes nothing (the gateway forwards its key so that a request retried after a gateway
 * crash is not sent twice), or, used for another request (the gateway's hash differs), a 409
 * invalid_idempotent_request; an older key is taken anew. Two requests racing on one key are ordered by the
 * key's unique index.
 */
export async function acceptEmails<Body>(
  db: Kysely<SenderDb>,
  input: { idempotency: Idempotency | undefined; emails: readonly Accepted[]; now: Date },
  respond: (ids: string[]) => Body,
): Promise<Body> {
  const { idempotency } = input;
  const built = buildEmails(input.emails, input.now);
  const body = respond(built.emails.map((e) => e.id));
  const claim =
    idempotency === undefined
      ? sql`select 1 as ok`
      : sql`insert into accepted_requests (team_id, idempotency_key, request_hash, response, created_at)
            values (${idempotency.teamId}::uuid, ${idempotency.key}, ${idempotency.requestHash ?? null}::text, ${JSON.stringify(body)}::jsonb, ${input.now})
            on conflict (team_id, idempotency_key) do update set request_hash = excluded.request_hash,
              response = excluded.response, created_at = excluded.created_at
            where accepted_requests.created_at <= ${new Date(input.now.getTime() - IDEMPOTENCY_TTL_MS)}
            returning 1 as ok`;
  // Rows go in as jsonb (attachments as arrays), so the text is the same whatever their number and the
  // statement is prepared once per connection.
  const { rows } = await sql<{ accepted: boolean }>`with claim as (${claim}),
    e as (insert into emails (id, team_id, domain_id, from_header, from_address, from_domain, to_addresses,
        cc_addresses, bcc_addresses, reply_to, subject, html, text, headers, tags, message_id, status, last_event,
        scheduled_at, created_at)
      select v.* from jsonb_to_recordset(${JSON.stringify(built.emails)}::jsonb) as v (id uuid, team_id uuid, domain_id uuid,
        from_header text, from_address text, from_domain text, to_addresses text[], cc_addresses text[],
        bcc_addresses text[], reply_to text[], subject text, html text, text text, headers jsonb, tags jsonb,
        message_id text, status text, last_event text, scheduled_at timestamptz, created_at timestamptz)
      where exists (select 1 from claim)),
    r as (insert into recipients (email_id, position, team_id, address, domain, status)
      select v.email_id, v.position, v.team_id, v.address, v.domain, 'pending'
      from jsonb_to_recordset(${JSON.stringify(built.recipients)}::jsonb)
        as v (email_id uuid, position smallint, team_id uuid, address text, domain text)
      where exists (select 1 from claim)),
    o as (insert into outbox (id, exchange, routing_key, envelope)
      select v.* from (${outboxSource(built.outbox)}) as v where exists (select 1 from claim)),
    a as (insert into email_attachments (id, email_id, position, filename, content_type, content_id, content)
      select v.* from unnest(${built.attachments.map((a) => a.id)}::uuid[], ${built.attachments.map((a) => a.email_id)}::uuid[],
        ${built.attachments.map((a) => a.position)}::smallint[],
        ${built.attachments.map((a) => a.filename)}::text[], ${built.attachments.map((a) => a.content_type)}::text[],
        ${built.attachments.map((a) => a.content_id)}::text[], ${built.attachments.map((a) => a.content)}::bytea[]) as v
      where exists (select 1 from claim))
    select ${PREPARED} exists (select 1 from claim) as accepted, ${NOTIFY_RELAY}`.execute(db);
  if (rows[0]?.accepted || idempotency === undefined) return body;
  const stored = await db
    .selectFrom('accepted_requests')
    .select(['response', 'request_hash'])
    .where('team_id', '=', idempotency.teamId)
    .where('idempotency_key', '=', idempotency.key)
    .executeTakeFirstOrThrow();
  if (stored.request_hash !== null && idempotency.requestHash !== undefined && stored.request_hash !== idempotency.requestHash) {
    throw new ApiError(409, 'invalid_idempotent_request', 'Same idempotency key used with a different request payload. Change your idempotency key or payload.');
  }
  return stored.response as Body;
}

/** How long an idempotency key holds, here as at the gateway. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** A team's idempotency key, with the gateway's hash of the request when it sent one. */
export type Idempotency = { teamId: string; key: string; requestHash?: string };

/**
 * Deletes the keys past their day, `batch` at a time (each its own statement) until none is left or
 * `maxBatches` ran; returns how many went. The sender runs it once a minute.
 */
export async function pruneAcceptedRequests(db: Kysely<SenderDb>, now: Date, opts: { batch?: number; maxBatches?: number } = {}): Promise<number> {
  const batch = opts.batch ?? 1000;
  let pruned = 0;
  for (let i = 0; i < (opts.maxBatches ?? 50); i++) {
    const r = await sql`delete from accepted_requests where ctid in (
      select ctid from accepted_requests where created_at <= ${new Date(now.getTime() - IDEMPOTENCY_TTL_MS)} limit ${batch})`.execute(db);
    const n = Number(r.numAffectedRows ?? 0n);
    pruned += n;
    if (n < batch) break;
  }
  return pruned;
}

/** The rows to write for accepted emails, ids assigned here, with the messages they cause. */
function buildEmails(accepted: readonly Accepted[], now: Date) {
  const emails: EmailRow[] = accepted.map(({ request, domain }) => {
    const id = newId();
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
      message_id: `<${id}@${request.fromDomain}>`,
      status: scheduled ? 'scheduled' : 'queued',
      last_event: scheduled ? 'scheduled' : 'sent',
      scheduled_at: request.scheduledAt,
      created_at: now,
    };
  });
  const recipientsByEmail = emails.map((email) =>
    envelopeRecipients({ to: email.to_addresses, cc: email.cc_addresses, bcc: email.bcc_addresses }).map((address, position) => ({
      email_id: email.id,
      position,
      team_id: email.team_id,
      address,
      domain: domainOf(address),
    })),
  );
  const attachments = accepted.flatMap(({ request }, i) =>
    request.attachments.map((a, position) => ({
      id: newId(),
      email_id: (emails[i] as EmailRow).id,
      position,
      filename: a.filename,
      content_type: a.contentType,
      content_id: a.contentId,
      content: a.content,
    })),
  );
  const outbox = outboxRows(
    emails.flatMap((email, i): OutboxMessage[] =>
      email.scheduled_at ? scheduleMessages(email, email.scheduled_at) : sendMessages(email, recipientsByEmail[i] as Positioned[]),
    ),
  );
  return { emails, recipients: recipientsByEmail.flat(), attachments, outbox };
}

type Positioned = { position: number; address: string };

/** What sending an email now causes: `email.sent` and one delivery command per domain group. */
export function sendMessages(email: EmailRow, recipients: readonly Positioned[]): OutboxMessage[] {
  return [
    emailEvent('email.sent', email, email.to_addresses, {}),
    ...groupByDomain(recipients.map((r) => r.address)).map(
      (group): OutboxMessage => ({
        exchange: 'commands',
        type: 'sender.deliver',
        team_id: email.team_id,
        data: {
          email_id: email.id,
          domain: group.domain,
          recipients: group.positions.map((i) => (recipients[i] as Positioned).position),
          attempt: 1,
        },
      }),
    ),
  ];
}

/** `email.scheduled` and the timer that sends the email at `at` (set again by a reschedule). */
export function scheduleMessages(email: EmailRow, at: Date, announce = true): OutboxMessage[] {
  const timer = timerMessage(email.team_id, sendTimerKey(email.id), at, 'sender.send-scheduled', {
    email_id: email.id,
    scheduled_at: at.toISOString(),
  });
  return announce ? [emailEvent('email.scheduled', email, email.to_addresses, {}), timer] : [timer];
}

/** Row-locks one email of the team (for reschedule, cancel and the scheduled send). */
export async function lockEmail(trx: Transaction<SenderDb>, teamId: string, id: string): Promise<EmailRow | undefined> {
  return trx.selectFrom('emails').selectAll().where('team_id', '=', teamId).where('id', '=', id).forUpdate().executeTakeFirst();
}

/** An email's recipients not yet attempted. */
export async function pendingRecipients(trx: Transaction<SenderDb>, emailId: string): Promise<Positioned[]> {
  return trx
    .selectFrom('recipients')
    .select(['position', 'address'])
    .where('email_id', '=', emailId)
    .where('status', '=', 'pending')
    .orderBy('position')
    .execute();
}

export type SingleAccept = { teamId: string; request: EmailRequest; keyDomainId: string | undefined; now: Date };

/**
 * Accepts single emails (POST /emails without an idempotency key) in groups: requests that arrive while
 * earlier groups are being written share one domain lookup and one accept statement, so one commit. A
 * lone request goes at once; under load groups grow by themselves (at most `maxConcurrent` statements run,
 * what arrives meanwhile waits for the next). Each request gets its own answer: its id, or the 403 of its
 * own sender check. If a group's statement fails, its emails are retried one by one, so an error lands only
 * on the request that caused it.
 */
export function createSingleAccepts(db: Kysely<SenderDb>, opts: { maxItems?: number; maxConcurrent?: number } = {}) {
  type Job = SingleAccept & { resolve: (id: string) => void; reject: (err: unknown) => void };
  const acceptGroup = async (jobs: Job[]) => {
    const domainOf = await findSendingDomains(db, jobs.map((j) => ({ teamId: j.teamId, name: j.request.fromDomain })));
    const ok: { job: Job; accepted: Accepted }[] = [];
    for (const job of jobs) {
      const sender = checkSender(domainOf(job.teamId, job.request.fromDomain), job.request, job.keyDomainId);
      if (sender.ok) ok.push({ job, accepted: { request: job.request, domain: sender.domain } });
      else job.reject(new SenderRefused(sender.message));
    }
    if (ok.length === 0) return;
    // Emails of several teams in one statement: each row's team is its sending domain's.
    const ids = await acceptEmails(db, { idempotency: undefined, emails: ok.map((o) => o.accepted), now: ok[0]!.job.now }, (emailIds) => emailIds);
    ok.forEach((o, i) => o.job.resolve(ids[i] as string));
  };
  const batcher = createBatcher<Job>({
    maxItems: opts.maxItems ?? 64,
    maxWaitMs: 0,
    maxConcurrent: opts.maxConcurrent ?? 4,
    flush: async (jobs) => {
      try {
        await acceptGroup(jobs);
      } catch (err) {
        if (jobs.length === 1) return jobs[0]!.reject(err);
        for (const job of jobs) await acceptGroup([job]).catch(job.reject);
      }
    },
  });
  return {
    accept: (input: SingleAccept) => new Promise<string>((resolve, reject) => batcher.add({ ...input, resolve, reject })),
  };
}

/** A sender check that failed inside a group: the request's 403 `validation_error`. */
export class SenderRefused extends Error {}
