// One delivery attempt of an email to its recipients at one domain (`sender.deliver`). The slow part
// (compose, sign, SMTP) runs before the transaction; the transaction then records each recipient's outcome,
// the events, suppressions and the retry timer together. Outcomes are recorded only for recipients still at
// this attempt, so a redelivered command records nothing twice; an attempt whose outcome was lost to a crash
// is made again, which can duplicate a message (RFC 1047) but never loses one.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { BounceSubType, BounceType, EmailBounced, SuppressionOrigin } from '@postline/contracts';
import { NOTIFY_RELAY, outboxRows, outboxSource, timerMessage, type Logger, type OutboxMessage, type SecretBox } from '@postline/platform';
import { addSuppressions } from './suppress.ts';
import { loadAttempts, type AttemptLoader } from './db/attempts.ts';
import type { EmailRow, LastEvent, RecipientRow, SenderDb, SendingDomainRow } from './db/schema.ts';
import { parseMailbox } from './domain/email-request.ts';
import { retryDelayMs, DELIVERY_LIFETIME_MS, TRANSIENT_SUPPRESSION } from './domain/retry.ts';
import { sandboxOutcome, SANDBOX_DOMAIN } from './domain/sandbox.ts';
import { emailEvent } from './events.ts';
import { messageFootprint, type ByteBudget } from './mta/budget.ts';
import { CompositionError, inProcessComposer, type Composer } from './mta/composer.ts';
import { DkimSigningError } from './mta/dkim.ts';
import { expiredDeferralSubType } from './mta/classify.ts';
import type { BounceClass, Mta, RecipientOutcome } from './mta/types.ts';
import { verpAddress } from './mta/verp.ts';

/** What happened to one recipient in this attempt. */
export type Result =
  | { kind: 'delivered'; code: number; response: string }
  | { kind: 'deferred'; code: number; response: string; fromServer: boolean }
  | { kind: 'bounced'; code: number; response: string; bounce: BounceClass }
  | { kind: 'complained' }
  /** reason: why the address is listed; none for an address the team added by hand. */
  | { kind: 'suppressed'; reason: 'previous_bounce' | 'previous_complaint' | undefined }
  | { kind: 'failed'; reason: string };

export type Attempt =
  | { kind: 'skip' }
  | { kind: 'attempted'; email: EmailRow; rows: RecipientRow[]; results: Result[]; attempt: number; domain: string };

export type DeliverDeps = {
  db: Kysely<SenderDb>;
  mta: Mta;
  box: SecretBox;
  verpKey: string;
  /** POSTLINE_DELAY_SCALE */
  scale: number;
  now: () => Date;
  logger: Logger;
  observe?: (results: readonly Result[], seconds: number) => void;
  /** Reads an attempt (createAttemptLoader joins concurrent reads); default: one statement per attempt. */
  load?: AttemptLoader;
  /** Composes and signs each message (createComposerPool: on worker threads); default: on this thread. */
  composer?: Composer;
  /** Bounds the memory of messages being composed and sent (createByteBudget); default: unbounded. */
  budget?: ByteBudget;
};

type Command = { team_id: string | null; data: { email_id: string; domain: string; recipients: number[]; attempt: number } };

/** Reads what the attempt needs and makes it (before any transaction). */
export async function attemptDelivery(deps: DeliverDeps, command: Command): Promise<Attempt> {
  const { email_id: emailId, domain, recipients: positions, attempt } = command.data;
  if (!command.team_id) return { kind: 'skip' };
  const query = { teamId: command.team_id, emailId, positions, attempt, now: deps.now() };
  const loaded = deps.load ? await deps.load(query) : (await loadAttempts(deps.db, [query]))[0];
  if (!loaded) return { kind: 'skip' };
  const { email, rows, sending, suppressed } = loaded;
  const done = (results: Result[]): Attempt => ({ kind: 'attempted', email, rows, results, attempt, domain });
  if (!sending?.sending_verified) return done(rows.map(() => ({ kind: 'failed', reason: 'domain_not_verified' })));

  const results: (Result | undefined)[] = rows.map((row) => suppressedResult(suppressed.get(row.address.toLowerCase())));
  if (domain === SANDBOX_DOMAIN) {
    return done(rows.map((row, i) => results[i] ?? sandboxOutcome(row.address)));
  }

  const toSend = rows.filter((_, i) => results[i] === undefined);
  if (toSend.length > 0) {
    const release = await deps.budget?.reserve(messageFootprint(email, loaded.attachmentBytes));
    const started = process.hrtime.bigint();
    let outcomes: RecipientOutcome[] | { unsendable: string };
    try {
      outcomes = await sendOverSmtp(deps, email, sending, toSend, loaded.hasAttachments);
    } catch (err) {
      // The message cannot be made (a DKIM key that cannot sign, content the composer refuses): another
      // try would fail alike, and it is never sent unsigned, so its recipients here end failed.
      if (!(err instanceof DkimSigningError || err instanceof CompositionError)) throw err;
      deps.logger.error({ err, emailId, domain: sending.name }, 'email cannot be composed and signed; its delivery fails');
      outcomes = { unsendable: err instanceof DkimSigningError ? 'dkim_signing_failed' : 'message_not_composable' };
    } finally {
      release?.();
    }
    const byAddress = new Map(Array.isArray(outcomes) ? outcomes.map((o) => [o.recipient, o]) : []);
    rows.forEach((row, i) => {
      if (results[i] !== undefined) return;
      if (!Array.isArray(outcomes)) return void (results[i] = { kind: 'failed', reason: outcomes.unsendable });
      const outcome = byAddress.get(row.address);
      results[i] = outcome ? resultOf(outcome) : { kind: 'deferred', code: 451, response: '4.3.0 No outcome reported', fromServer: false };
    });
    deps.observe?.(results as Result[], Number(process.hrtime.bigint() - started) / 1e9);
  }
  return done(results as Result[]);
}

function suppressedResult(origin: SuppressionOrigin | undefined): Result | undefined {
  if (!origin) return undefined;
  return { kind: 'suppressed', reason: origin === 'complaint' ? 'previous_complaint' : origin === 'bounce' ? 'previous_bounce' : undefined };
}

function resultOf(outcome: RecipientOutcome): Result {
  switch (outcome.status) {
    case 'delivered':
      return { kind: 'delivered', code: outcome.code, response: outcome.response };
    case 'deferred':
      return { kind: 'deferred', code: outcome.code, response: outcome.response, fromServer: outcome.mx !== null };
    case 'bounced':
      return { kind: 'bounced', code: outcome.code, response: outcome.response, bounce: outcome.bounce };
  }
}

/** Private keys opened once per domain state, not once per message. */
const keyCache = new Map<string, string>();

async function sendOverSmtp(
  deps: DeliverDeps,
  email: EmailRow,
  sending: SendingDomainRow,
  rows: RecipientRow[],
  hasAttachments: boolean,
): Promise<RecipientOutcome[]> {
  const attachments = hasAttachments
    ? await deps.db.selectFrom('email_attachments').selectAll().where('email_id', '=', email.id).orderBy('position').execute()
    : [];
  const input = {
    from: parseMailbox(email.from_header) ?? { name: null, address: email.from_address },
    to: email.to_addresses,
    cc: email.cc_addresses,
    replyTo: email.reply_to,
    subject: email.subject,
    html: email.html,
    text: email.text,
    headers: email.headers as unknown as { name: string; value: string }[],
    attachments: attachments.map((a) => ({ filename: a.filename, contentType: a.content_type, contentId: a.content_id, content: a.content })),
    messageId: email.message_id,
    date: email.scheduled_at ?? email.created_at,
  };
  const cacheKey = `${sending.domain_id}:${sending.dkim_private_key_encrypted.slice(-24)}`;
  let privateKeyPem = keyCache.get(cacheKey);
  if (!privateKeyPem) {
    privateKeyPem = deps.box.open(sending.dkim_private_key_encrypted);
    if (keyCache.size >= 1000) keyCache.clear();
    keyCache.set(cacheKey, privateKeyPem);
  }
  // Throws a DkimSigningError when no signature can be made: the message never goes out unsigned.
  const raw = await (deps.composer ?? inProcessComposer).compose(input, { domain: sending.name, selector: sending.dkim_selector, privateKeyPem });
  const single = rows.length === 1 ? (rows[0] as RecipientRow).position : undefined;
  return deps.mta.deliver({
    domain: (rows[0] as RecipientRow).domain,
    envelopeFrom: verpAddress({ emailId: email.id, recipient: single, returnPath: sending.return_path, key: deps.verpKey }),
    recipients: rows.map((r) => r.address),
    raw,
    requireTls: sending.tls === 'enforced',
  });
}

type Planned = {
  row: RecipientRow;
  result: Result;
  status: RecipientRow['status'];
  bounceType: RecipientRow['bounce_type'];
  bounceSubType: RecipientRow['bounce_sub_type'];
  firstDeferredAt: Date | null;
};

/** Each recipient's new state after this attempt's result; a deferral past the delivery lifetime ends. */
function planAttempt(rows: readonly RecipientRow[], results: readonly Result[], now: Date, lifetimeMs: number): Planned[] {
  return rows.map((row, i) => {
    const result = results[i] as Result;
    let status: RecipientRow['status'];
    let bounceType: RecipientRow['bounce_type'] = null;
    let bounceSubType: RecipientRow['bounce_sub_type'] = null;
    let firstDeferredAt = row.first_deferred_at;
    switch (result.kind) {
      case 'delivered':
      case 'complained':
      case 'suppressed':
      case 'failed':
        status = result.kind;
        break;
      case 'bounced':
        status = 'bounced';
        bounceType = result.bounce.type;
        bounceSubType = result.bounce.subType;
        break;
      case 'deferred': {
        const since = row.first_deferred_at ?? now;
        if (now.getTime() - since.getTime() >= lifetimeMs) {
          // Out of time: a server kept answering 4xx → a transient bounce; nobody answered → failed.
          status = result.fromServer ? 'bounced' : 'failed';
          if (result.fromServer) {
            bounceType = 'Transient';
            bounceSubType = expiredDeferralSubType(result.response);
          }
        } else {
          status = 'deferred';
          firstDeferredAt = since;
        }
        break;
      }
    }
    return { row, result, status, bounceType, bounceSubType, firstDeferredAt };
  });
}

type Bounced = { address: string; bounce: EmailBounced['bounce']; suppress: boolean; transient: boolean };

/** What the recorded part of one attempt causes: its events and retry timer, its last event, its bounces. */
function consequences(
  deps: DeliverDeps,
  attempt: Attempt & { kind: 'attempted' },
  planned: readonly Planned[],
  recorded: (row: RecipientRow) => boolean,
  now: Date,
): { messages: OutboxMessage[]; last: LastEvent | undefined; bounced: Bounced[] } {
  const { email } = attempt;
  const by = {
    delivered: [] as string[],
    complained: [] as string[],
    delayed: [] as { address: string; result: Result & { kind: 'deferred' } }[],
    retry: [] as number[],
    bounced: [] as Bounced[],
    suppressed: [] as { address: string; reason: 'previous_bounce' | 'previous_complaint' | undefined }[],
    failed: [] as { address: string; reason: string }[],
  };
  for (const { row, result, status, bounceSubType } of planned) {
    if (!recorded(row)) continue;

    switch (result.kind) {
      case 'delivered':
        by.delivered.push(row.address);
        break;
      case 'complained':
        by.delivered.push(row.address);
        by.complained.push(row.address);
        break;
      case 'suppressed':
        by.suppressed.push({ address: row.address, reason: result.reason });
        break;
      case 'failed':
        by.failed.push({ address: row.address, reason: result.reason });
        break;
      case 'bounced':
        by.bounced.push({
          address: row.address,
          bounce: bounceOf(result.bounce, result.code, result.response),
          suppress: result.bounce.suppress && row.domain !== SANDBOX_DOMAIN,
          transient: aboutTheMailbox(result.bounce),
        });
        break;
      case 'deferred':
        if (status === 'deferred') {
          by.retry.push(row.position);
          if (row.first_deferred_at === null) by.delayed.push({ address: row.address, result });
        } else if (status === 'bounced') {
          by.bounced.push({
            address: row.address,
            bounce: {
              type: 'Transient',
              subType: bounceSubType ?? 'General',
              message: 'The recipient\'s mail server kept refusing the email temporarily until we stopped retrying.',
              diagnosticCode: [diagnostic(result.code, result.response)],
            },
            suppress: false,
            transient: aboutTheMailbox({ type: 'Transient', subType: bounceSubType ?? 'General' }),
          });
        } else {
          by.failed.push({ address: row.address, reason: 'delivery_timeout' });
        }
        break;
    }
  }

  const messages: OutboxMessage[] = [];
  let last: LastEvent | undefined;
  if (by.delivered.length > 0) {
    messages.push(emailEvent('email.delivered', email, by.delivered, {}));
    last = 'delivered';
  }
  if (by.complained.length > 0) {
    messages.push(emailEvent('email.complained', email, by.complained, {}));
    last = 'complained';
  }
  if (by.delayed.length > 0) {
    const first = (by.delayed[0] as (typeof by.delayed)[number]).result;
    messages.push(
      emailEvent('email.delivery_delayed', email, by.delayed.map((d) => d.address), {
        delivery_delayed: { message: 'The recipient\'s mail server did not accept the email yet; we will retry.', diagnosticCode: [diagnostic(first.code, first.response)] },
      }),
    );
    last = 'delivery_delayed';
  }
  for (const b of by.bounced) {
    messages.push(emailEvent('email.bounced', email, [b.address], { bounce: b.bounce }));
    last = 'bounced';
  }
  for (const reason of new Set(by.suppressed.map((s) => s.reason))) {
    const addresses = by.suppressed.filter((s) => s.reason === reason).map((s) => s.address);
    messages.push(
      emailEvent('email.suppressed', email, addresses, {
        suppressed: {
          message:
            reason === undefined
              ? 'The recipient is on your suppression list, so the email was not sent to it.'
              : 'The recipient is on your suppression list because of an earlier bounce or complaint, so the email was not sent to it.',
          type: 'OnAccountSuppressionList',
          ...(reason === undefined ? {} : { reason }),
        },
      }),
    );
    last = 'suppressed';
  }
  for (const reason of new Set(by.failed.map((f) => f.reason))) {
    messages.push(emailEvent('email.failed', email, by.failed.filter((f) => f.reason === reason).map((f) => f.address), { failed: { reason } }));
    last = 'failed';
  }
  if (by.retry.length > 0) messages.push(retryTimer(deps, email, attempt.domain, by.retry, attempt.attempt, now));
  return { messages, last, bounced: by.bounced };
}

/**
 * Records the outcomes of attempts (one, or a worker's batch) with their events, suppressions and retry
 * timers: one statement for every recipient of every attempt and one for all their events, whatever the
 * number of attempts. Only recipients still at an attempt are updated, so a redelivered command (or a racing
 * duplicate, in this batch or another) records nothing and emits nothing; the effect is that of recording
 * the attempts one after another.
 */
export async function recordAttempts(deps: DeliverDeps, trx: Transaction<SenderDb>, attempts: readonly Attempt[]): Promise<void> {
  const made = attempts.filter((a): a is Attempt & { kind: 'attempted' } => a.kind === 'attempted');
  if (made.length === 0) return;
  const now = deps.now();
  const lifetimeMs = DELIVERY_LIFETIME_MS * deps.scale;
  const plans = made.map((a) => planAttempt(a.rows, a.results, now, lifetimeMs));

  // A recipient at one attempt is recorded once: the first copy in the batch wins, as it would in turn.
  const key = (emailId: string, position: number, attempt: number) => `${emailId.toLowerCase()} ${position} ${attempt}`;
  const seen = new Set<string>();
  // One array per column: unnest, unlike a JSON record set, lets the planner count the rows (see below).
  const v = {
    email_id: [] as string[],
    position: [] as number[],
    attempt: [] as number[],
    status: [] as string[],
    code: [] as (number | null)[],
    response: [] as (string | null)[],
    bounce_type: [] as (string | null)[],
    bounce_sub_type: [] as (string | null)[],
    first_deferred_at: [] as (string | null)[],
  };
  made.forEach((a, i) => {
    for (const p of plans[i] as Planned[]) {
      const k = key(a.email.id, p.row.position, a.attempt);
      if (seen.has(k)) continue;
      seen.add(k);
      v.email_id.push(a.email.id);
      v.position.push(p.row.position);
      v.attempt.push(a.attempt);
      v.status.push(p.status);
      v.code.push('code' in p.result ? p.result.code : null);
      v.response.push('response' in p.result ? p.result.response.slice(0, 1000) : null);
      v.bounce_type.push(p.bounceType);
      v.bounce_sub_type.push(p.bounceSubType);
      v.first_deferred_at.push(p.firstDeferredAt?.toISOString() ?? null);
    }
  });
  // Every recipient must be one probe of the primary key, whatever the table's statistics (there are none
  // where autovacuum is off). Not PREPARED, so planned for its parameters on every call: a generic plan
  // made while the table was young would keep scanning it (see PREPARED). unnest is counted exactly, so a
  // handful of rows probes the key; a JSON record set counts as 100 rows, and against a table of some
  // 30,000 recipients that made a scan of the whole table look cheaper. An added `email_id = any(ids)`
  // made it worse: without statistics each id of a composite key is taken to match 0.5% of the rows
  // (measured: 20–50 ms instead of 1 ms an update at 300,000 recipients).
  const { rows: updatedRows } = await sql<{ email_id: string; position: number; attempts: number }>`
    update recipients as r set status = v.status, attempts = v.attempt, last_code = v.code,
      last_response = v.response, bounce_type = v.bounce_type, bounce_sub_type = v.bounce_sub_type,
      first_deferred_at = v.first_deferred_at, updated_at = ${now}
    from unnest(${v.email_id}::uuid[], ${v.position}::int[], ${v.attempt}::int[], ${v.status}::text[], ${v.code}::int[],
      ${v.response}::text[], ${v.bounce_type}::text[], ${v.bounce_sub_type}::text[], ${v.first_deferred_at}::timestamptz[])
      as v (email_id, position, attempt, status, code, response, bounce_type, bounce_sub_type, first_deferred_at)
    where r.email_id = v.email_id and r.position = v.position and r.attempts = v.attempt - 1
      and r.status in ('pending', 'deferred')
    returning r.email_id, r.position, r.attempts`.execute(trx);
  // Each updated recipient is credited to one attempt only (the first holding it), as `seen` kept one copy.
  const updated = new Set(updatedRows.map((u) => key(u.email_id, u.position, u.attempts)));

  const messages: OutboxMessage[] = [];
  const lastOf = new Map<string, LastEvent>();
  const bounces: { attempt: Attempt & { kind: 'attempted' }; bounced: Bounced[] }[] = [];
  made.forEach((a, i) => {
    const recorded = (row: RecipientRow) => updated.delete(key(a.email.id, row.position, a.attempt));
    const c = consequences(deps, a, plans[i] as Planned[], recorded, now);
    messages.push(...c.messages);
    if (c.last) lastOf.set(a.email.id, c.last);
    if (c.bounced.length > 0) bounces.push({ attempt: a, bounced: c.bounced });
  });
  if (messages.length > 0) {
    // Sorted by id, so that concurrent batches lock the emails they share in the same order. Not PREPARED,
    // for the reason the recipients update above is not.
    const lasts = [...lastOf].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, last]) => ({ id, last }));
    await sql`with o as (insert into outbox (id, exchange, routing_key, envelope) ${outboxSource(outboxRows(messages))}),
      e as (update emails set last_event = v.last from jsonb_to_recordset(${JSON.stringify(lasts)}::jsonb) as v (id uuid, last text)
        where emails.id = any(${lasts.map((l) => l.id)}::uuid[]) and emails.id = v.id)
      select ${NOTIFY_RELAY}`.execute(trx);
  }

  for (const { attempt, bounced } of bounces) {
    const { email } = attempt;
    const suppress = bounced.filter((b) => b.suppress);
    if (suppress.length > 0) {
      await addSuppressions(trx, email.team_id, suppress.map((b) => ({ email: b.address, origin: 'bounce' as const, sourceId: email.id })), now);
    }
    const transient = bounced.filter((b) => b.transient && !b.suppress);
    if (transient.length > 0) await suppressRepeatedTransients(deps, trx, email.team_id, email.id, transient.map((b) => b.address), now);
  }
}

function bounceOf(bounce: BounceClass, code: number, response: string): EmailBounced['bounce'] {
  return {
    type: bounce.type,
    subType: bounce.subType,
    message: bounce.type === 'Permanent'
      ? 'The recipient\'s mail server permanently rejected the email.'
      : bounce.type === 'Transient'
        ? 'The recipient\'s mail server rejected the email for a reason that may not last.'
        : 'The recipient\'s mail server rejected the email for an undetermined reason.',
    diagnosticCode: [diagnostic(code, response)],
  };
}

/**
 * A `diagnosticCode` entry as in a DSN (RFC 3464): `smtp; 550 5.1.1 ...`. A server's reply (and one we make
 * up) already starts with its code; a sandbox reply does not.
 */
export function diagnostic(code: number, response: string): string {
  return /^\d{3}(?:[ -]|$)/.test(response) ? `smtp; ${response}` : `smtp; ${code} ${response}`;
}

function retryTimer(deps: DeliverDeps, email: EmailRow, domain: string, positions: number[], attempt: number, now: Date): OutboxMessage {
  const due = new Date(now.getTime() + retryDelayMs(attempt, deps.scale));
  return timerMessage(email.team_id, `email-deliver:${email.id}:${domain}:${positions[0] ?? 0}`, due, 'sender.deliver', {
    email_id: email.id,
    domain,
    recipients: positions,
    attempt: attempt + 1,
  });
}

/**
 * The transient bounces that say something about the mailbox (a server refusing it for now, or full), and so
 * count towards a temporary suppression; a refusal of the message or of our sending (ContentRejected,
 * AttachmentRejected, MessageTooLarge: a block list, a spam filter, a size limit) does not.
 */
const MAILBOX_SUB_TYPES: BounceSubType[] = ['General', 'MailboxFull'];

function aboutTheMailbox(bounce: { type: BounceType; subType: BounceSubType }): boolean {
  return bounce.type === 'Transient' && MAILBOX_SUB_TYPES.includes(bounce.subType);
}

/** A few transient bounces of one address in a window make a temporary suppression that expires. */
async function suppressRepeatedTransients(
  deps: DeliverDeps,
  trx: Transaction<SenderDb>,
  teamId: string,
  emailId: string,
  addresses: string[],
  now: Date,
): Promise<void> {
  const since = new Date(now.getTime() - TRANSIENT_SUPPRESSION.windowMs * deps.scale);
  // Addresses compare without case, as the suppression list does (Foo@ and foo@ are one mailbox to it).
  const lower = sql<string>`lower(address)`;
  const counts = await trx
    .selectFrom('recipients')
    .select([lower.as('address'), (eb) => eb.fn.countAll<string>().as('n')])
    .where('team_id', '=', teamId)
    .where('bounce_type', '=', 'Transient')
    .where('bounce_sub_type', 'in', MAILBOX_SUB_TYPES)
    .where(lower, 'in', addresses.map((a) => a.toLowerCase()))
    .where('updated_at', '>=', since)
    .groupBy(lower)
    .execute();
  const repeated = counts.filter((c) => Number(c.n) >= TRANSIENT_SUPPRESSION.bounces).map((c) => c.address);
  if (repeated.length === 0) return;
  const expiresAt = new Date(now.getTime() + TRANSIENT_SUPPRESSION.durationMs * deps.scale);
  await addSuppressions(trx, teamId, repeated.map((email) => ({ email, origin: 'bounce' as const, sourceId: emailId, expiresAt })), now);
}
