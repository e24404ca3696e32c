// What a delivery attempt reads (the email, its recipients at the attempt, its sending domain, their
// suppressions, its attachments) and the events recording attempts writes besides recipients' states.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { SuppressionOrigin } from '@postline/contracts';
import { createBatchLoader, NOTIFY_RELAY, outboxRows, outboxSource, type OutboxMessage } from '@postline/platform';
import type { EmailRow, LastEvent, RecipientRow, SenderDb, SendingDomainRow } from '../../db/schema.ts';
import type { SmtpTrace } from '../smtp/transcript.ts';

export type AttemptQuery = { teamId: string; emailId: string; positions: number[]; attempt: number; now: Date };

export type LoadedAttempt = {
  email: EmailRow;
  /** The command's recipients still waiting for this attempt, by position. */
  recipients: RecipientRow[];
  sending: SendingDomainRow | undefined;
  /** Active suppressions among those recipients: lower-case address → origin. */
  suppressed: Map<string, SuppressionOrigin>;
  hasAttachments: boolean;
  /** Bytes of the email's attachments, decoded. */
  attachmentBytes: number;
  /** The reputation guard paused the email's team or its sending domain: the attempt waits (is parked). */
  paused: boolean;
};

/** A row of loadAttempts' statement: JSON carries timestamps as text. */
type AttemptRow = Omit<EmailRow, 'created_at' | 'scheduled_at'> & {
  ord: number;
  created_at: Date | string;
  scheduled_at: Date | string | null;
  recipient_rows: (Omit<RecipientRow, 'first_deferred_at' | 'updated_at'> & {
    first_deferred_at: string | null;
    updated_at: string;
  })[];
  sending: (Omit<SendingDomainRow, 'state_at'> & { state_at: string }) | null;
  suppressions: { email: string; origin: SuppressionOrigin }[];
  has_attachments: boolean;
  attachment_bytes: number;
  paused: boolean;
};

/**
 * Everything the delivery attempts of `queries` read, in one round trip whatever their number: each email
 * (if it is still queued), its recipients at that attempt, its sending domain's state and the recipients'
 * suppressions. The answer is in the order of `queries`; undefined where there is nothing to attempt.
 */
export async function loadAttempts(
  db: Kysely<SenderDb>,
  queries: readonly AttemptQuery[],
): Promise<(LoadedAttempt | undefined)[]> {
  if (queries.length === 0) return [];
  // `e.id = any(ids)` repeats the join key so the planner sees how few rows there are: it estimates any
  // jsonb_to_recordset at 100 rows, and against a young or bloated table with stale statistics it then
  // scans the whole table rather than probe the key.
  // Not PREPARED: a generic plan made while emails was young kept scanning it once it had grown (see
  // PREPARED); planning it costs about 0.5 ms a batch.
  const wanted = queries.map((q, ord) => ({
    ord,
    team_id: q.teamId,
    email_id: q.emailId,
    positions: q.positions,
    attempt: q.attempt,
    at: q.now,
  }));
  const { rows } = await sql<AttemptRow>`select q.ord, e.*,
      coalesce((select json_agg(r order by r.position) from recipients r
        where r.email_id = e.id and r.position = any(q.positions) and r.status in ('pending', 'deferred')
          and r.attempts = q.attempt - 1), '[]') as recipient_rows,
      (select row_to_json(d) from sending_domains d where d.domain_id = e.domain_id) as sending,
      coalesce((select json_agg(json_build_object('email', s.email, 'origin', s.origin)) from suppressions s
        where s.team_id = e.team_id and (s.expires_at is null or s.expires_at > q.at)
          and s.email in (select lower(r2.address) from recipients r2 where r2.email_id = e.id and r2.position = any(q.positions))),
        '[]') as suppressions,
      att.n > 0 as has_attachments, att.bytes as attachment_bytes,
      exists (select 1 from reputation_pauses p where p.team_id = e.team_id
        and p.domain_id in ('00000000-0000-0000-0000-000000000000'::uuid, e.domain_id)) as paused
    from jsonb_to_recordset(${JSON.stringify(wanted)}::jsonb)
      as q (ord int, team_id uuid, email_id uuid, positions int[], attempt int, at timestamptz)
    join emails e on e.id = q.email_id and e.team_id = q.team_id and e.status = 'queued'
    cross join lateral (select count(*) as n, coalesce(sum(octet_length(a.content)), 0)::int as bytes
      from email_attachments a where a.email_id = e.id) as att
    where e.id = any(${queries.map((q) => q.emailId)}::uuid[])`.execute(db);
  const loaded: (LoadedAttempt | undefined)[] = queries.map(() => undefined);
  for (const row of rows) {
    const {
      ord,
      recipient_rows: recipientRows,
      sending,
      suppressions,
      has_attachments: hasAttachments,
      attachment_bytes: attachmentBytes,
      paused,
      ...email
    } = row;
    if (recipientRows.length === 0) continue;
    loaded[ord] = {
      email: {
        ...email,
        created_at: new Date(email.created_at),
        scheduled_at: email.scheduled_at ? new Date(email.scheduled_at) : null,
      },
      recipients: recipientRows.map((r) => ({
        ...r,
        first_deferred_at: r.first_deferred_at ? new Date(r.first_deferred_at) : null,
        updated_at: new Date(r.updated_at),
      })),
      sending: sending ? { ...sending, state_at: new Date(sending.state_at) } : undefined,
      suppressed: new Map(suppressions.map((s) => [s.email, s.origin])),
      hasAttachments,
      attachmentBytes,
      paused,
    };
  }
  return loaded;
}

export type AttemptLoader = (query: AttemptQuery) => Promise<LoadedAttempt | undefined>;

/**
 * `loadAttempts` for attempts prepared at the same time (a worker's prefetched commands arrive together):
 * their reads join one statement, at most `maxConcurrent` at once, so that under load the groups grow.
 */
export function createAttemptLoader(
  db: Kysely<SenderDb>,
  opts: { maxItems?: number; maxWaitMs?: number; maxConcurrent?: number } = {},
): AttemptLoader {
  return createBatchLoader({
    maxItems: opts.maxItems ?? 64,
    maxWaitMs: opts.maxWaitMs ?? 0,
    maxConcurrent: opts.maxConcurrent ?? 2,
    loadMany: (queries: AttemptQuery[]) => loadAttempts(db, queries),
  });
}

/** The email's attachments, in their order. */
export function loadAttachments(db: Kysely<SenderDb>, emailId: string) {
  return db.selectFrom('email_attachments').selectAll().where('email_id', '=', emailId).orderBy('position').execute();
}

/**
 * The events and timers of recorded attempts into the outbox, and the `last_event` of each email they are
 * about, in one statement. Emails are updated in id order, so that concurrent batches lock the emails they
 * share in the same order. Not PREPARED, for the reason updateRecipientStates is not.
 */
export async function enqueueAttemptMessages(
  trx: Transaction<SenderDb>,
  messages: readonly OutboxMessage[],
  lastEvents: ReadonlyMap<string, LastEvent>,
): Promise<void> {
  const lasts = [...lastEvents].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, last]) => ({ id, last }));
  await sql`with o as (insert into outbox (id, exchange, routing_key, envelope) ${outboxSource(outboxRows(messages))}),
    e as (update emails set last_event = latest.last from jsonb_to_recordset(${JSON.stringify(lasts)}::jsonb) as latest (id uuid, last text)
      where emails.id = any(${lasts.map((l) => l.id)}::uuid[]) and emails.id = latest.id)
    select ${NOTIFY_RELAY}`.execute(trx);
}

/**
 * The traces of recorded attempts, one row per MX address tried, in one statement. A copy of an attempt
 * already recorded (the same email, command and attempt) writes nothing.
 */
export async function insertAttemptTraces(
  trx: Transaction<SenderDb>,
  attempts: readonly {
    teamId: string;
    emailId: string;
    firstPosition: number;
    attempt: number;
    traces: readonly SmtpTrace[];
    /** The signed message's header block, kept with each transaction that reached an MX. */
    messageHeaders: string | null;
  }[],
): Promise<void> {
  const rows = attempts.flatMap((a) =>
    a.traces.map((trace, seq) => ({
      email_id: a.emailId,
      first_position: a.firstPosition,
      attempt: a.attempt,
      seq,
      team_id: a.teamId,
      recipients: trace.recipients,
      mx: trace.mx,
      ip: trace.ip,
      port: trace.port,
      tls_version: trace.tls?.version ?? null,
      tls_cipher: trace.tls?.cipher ?? null,
      started_at: trace.startedAt,
      duration_ms: Math.round(trace.durationMs),
      transcript: trace.lines,
      omitted: trace.omitted,
      message_headers: trace.mx === null ? null : a.messageHeaders,
    })),
  );
  if (rows.length === 0) return;
  await trx
    .insertInto('delivery_attempts')
    .values(rows)
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** How many of an email's attempt traces are listed, oldest first. */
export const ATTEMPTS_SHOWN = 500;

/** The traces of an email's delivery attempts, oldest first: ATTEMPTS_SHOWN, and one more when there are more. */
export function listAttemptTraces(db: Kysely<SenderDb>, teamId: string, emailId: string) {
  return db
    .selectFrom('delivery_attempts')
    .selectAll()
    .where('email_id', '=', emailId)
    .where('team_id', '=', teamId)
    .orderBy('started_at')
    .orderBy('seq')
    .limit(ATTEMPTS_SHOWN + 1)
    .execute();
}
