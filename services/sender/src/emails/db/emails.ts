// Emails and their recipients: the accept statement, and every other statement on `emails` and on an
// email's `recipients` that the accept side runs (the delivery side's are in attempts.ts).
import { sql, type Kysely, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import type { ApiRequests, PaginationQuery } from '@postline/contracts';
import {
  escapeLike,
  firstIdAt,
  NOTIFY_RELAY,
  outboxSource,
  paginate,
  PREPARED,
  type OutboxRow,
  type Page,
} from '@postline/platform';
import type { EmailAttachmentsTable, EmailRow, LastEvent, RecipientRow, SenderDb } from '../../db/schema.ts';

/** The rows accepting emails writes: ids assigned, with the messages they cause. */
export type AcceptedRows = {
  emails: EmailRow[];
  recipients: Pick<RecipientRow, 'email_id' | 'position' | 'team_id' | 'address' | 'domain'>[];
  attachments: (Omit<Selectable<EmailAttachmentsTable>, 'id'> & { id: string })[];
  outbox: OutboxRow[];
};

/**
 * Writes the emails, their recipients, attachments and outbox messages in one statement (data-modifying
 * CTEs), so it is atomic without a transaction and costs a single round trip; `claim` runs first and
 * nothing is written unless it returns a row (claimIdempotencyKey). Returns whether the rows were written.
 */
export async function insertAcceptedEmails(
  db: Kysely<SenderDb>,
  rows: AcceptedRows,
  claim: RawBuilder<unknown>,
): Promise<boolean> {
  // Rows go in as jsonb (attachments as arrays), so the text is the same whatever their number and the
  // statement is prepared once per connection.
  const { attachments } = rows;
  const result = await sql<{ accepted: boolean }>`with claim as (${claim}),
    e as (insert into emails (id, team_id, domain_id, from_header, from_address, from_domain, to_addresses,
        cc_addresses, bcc_addresses, reply_to, subject, html, text, headers, tags, message_id, status, last_event,
        scheduled_at, created_at, broadcast_id, template_id, topic_id, api_key_id, request_id)
      select v.* from jsonb_to_recordset(${JSON.stringify(rows.emails)}::jsonb) as v (id uuid, team_id uuid, domain_id uuid,
        from_header text, from_address text, from_domain text, to_addresses text[], cc_addresses text[],
        bcc_addresses text[], reply_to text[], subject text, html text, text text, headers jsonb, tags jsonb,
        message_id text, status text, last_event text, scheduled_at timestamptz, created_at timestamptz,
        broadcast_id uuid, template_id uuid, topic_id uuid, api_key_id uuid, request_id uuid)
      where exists (select 1 from claim)),
    r as (insert into recipients (email_id, position, team_id, address, domain, status)
      select v.email_id, v.position, v.team_id, v.address, v.domain, 'pending'
      from jsonb_to_recordset(${JSON.stringify(rows.recipients)}::jsonb)
        as v (email_id uuid, position smallint, team_id uuid, address text, domain text)
      where exists (select 1 from claim)),
    o as (insert into outbox (id, exchange, routing_key, envelope)
      select v.* from (${outboxSource(rows.outbox)}) as v where exists (select 1 from claim)),
    a as (insert into email_attachments (id, email_id, position, filename, content_type, content_id, content)
      select v.* from unnest(${attachments.map((attachment) => attachment.id)}::uuid[], ${attachments.map((attachment) => attachment.email_id)}::uuid[],
        ${attachments.map((attachment) => attachment.position)}::smallint[],
        ${attachments.map((attachment) => attachment.filename)}::text[], ${attachments.map((attachment) => attachment.content_type)}::text[],
        ${attachments.map((attachment) => attachment.content_id)}::text[], ${attachments.map((attachment) => attachment.content)}::bytea[]) as v
      where exists (select 1 from claim))
    select ${PREPARED} exists (select 1 from claim) as accepted, ${NOTIFY_RELAY}`.execute(db);
  return result.rows[0]?.accepted === true;
}

/** One email of the team. */
export async function findEmail(db: Kysely<SenderDb>, teamId: string, id: string): Promise<EmailRow | undefined> {
  return db.selectFrom('emails').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

/** A page of the team's emails (keyset on id). */
/**
 * An email's id is made when it is accepted and its created_at in the same statement; the slack covers a
 * clock step between the two, so a time filter can also bound the id and read a range of (team_id, id).
 */
const ID_TIME_SLACK_MS = 60_000;

/** A team's emails, newest first, narrowed by GET /emails's filters (all together). */
export async function listEmails(
  db: Kysely<SenderDb>,
  teamId: string,
  filter: ApiRequests.EmailFilterQuery,
  query: PaginationQuery,
): Promise<Page<EmailRow>> {
  return paginate(filteredEmails(db, teamId, filter).selectAll(), query);
}

/** The team's emails narrowed by GET /emails's filters (all together), columns still to choose. */
function filteredEmails(db: Kysely<SenderDb>, teamId: string, filter: ApiRequests.EmailFilterQuery) {
  let q = db.selectFrom('emails').where('team_id', '=', teamId);
  if (filter.last_event) q = q.where('last_event', '=', filter.last_event);
  if (filter.from) q = q.where(sql<string>`lower(from_address)`, '=', filter.from.toLowerCase());
  if (filter.to) {
    const to = filter.to.toLowerCase();
    q = q.where('id', 'in', (eb) =>
      eb
        .selectFrom('recipients')
        .select('recipients.email_id')
        .where('recipients.team_id', '=', teamId)
        .where(sql<string>`lower(recipients.address)`, '=', to),
    );
  }
  if (filter.subject) q = q.where('subject', 'ilike', `%${escapeLike(filter.subject)}%`);
  if (filter.tag) {
    // Containment matches a tag object by its name alone, or by name and value; like the last event, it
    // reads the team's emails newest first (tags have no index of their own).
    const at = filter.tag.indexOf('=');
    const tag = at < 0 ? { name: filter.tag } : { name: filter.tag.slice(0, at), value: filter.tag.slice(at + 1) };
    q = q.where(sql<boolean>`tags @> ${JSON.stringify([tag])}::jsonb`);
  }
  if (filter.domain_id) q = q.where('domain_id', '=', filter.domain_id);
  if (filter.broadcast_id) q = q.where('broadcast_id', '=', filter.broadcast_id);
  if (filter.api_key_id) q = q.where('api_key_id', '=', filter.api_key_id);
  if (filter.created_after) {
    const at = new Date(filter.created_after);
    q = q.where('created_at', '>=', at).where('id', '>=', firstIdAt(at.getTime() - ID_TIME_SLACK_MS));
  }
  if (filter.created_before) {
    const at = new Date(filter.created_before);
    q = q.where('created_at', '<', at).where('id', '<', firstIdAt(at.getTime() + ID_TIME_SLACK_MS));
  }
  return q;
}

/** The columns a CSV line shows: never the bodies, which can be large. */
const EXPORT_COLUMNS = [
  'id',
  'created_at',
  'from_header',
  'to_addresses',
  'cc_addresses',
  'bcc_addresses',
  'subject',
  'last_event',
  'scheduled_at',
  'message_id',
  'tags',
] as const;

/**
 * Every email the filters select, newest first, in pages of `pageSize` read one after the other (the same
 * filters and keyset as the list, without the bodies), so that an export of any size holds one page at a time.
 */
export async function* exportEmails(
  db: Kysely<SenderDb>,
  teamId: string,
  filter: ApiRequests.EmailFilterQuery,
  pageSize = 200,
) {
  let after: string | undefined;
  for (;;) {
    const page = await paginate(filteredEmails(db, teamId, filter).select(EXPORT_COLUMNS), {
      limit: pageSize,
      ...(after ? { after } : {}),
    });
    if (page.data.length > 0) yield page.data;
    if (!page.has_more) return;
    after = page.data[page.data.length - 1]!.id;
  }
}

/** Where each recipient of an email stands, in the order they were given. */
export async function listRecipients(db: Kysely<SenderDb>, teamId: string, emailId: string) {
  return db
    .selectFrom('recipients')
    .select([
      'address',
      'status',
      'attempts',
      'last_code',
      'last_response',
      'bounce_type',
      'bounce_sub_type',
      'updated_at',
    ])
    .where('team_id', '=', teamId)
    .where('email_id', '=', emailId)
    .orderBy('position')
    .execute();
}

/**
 * What a share link shows of an email. By id alone: the link's signed token names the email, and the
 * caller answers with the email's team so that the gateway can check it.
 */
export async function findSharedEmail(
  db: Kysely<SenderDb>,
  id: string,
): Promise<{ team_id: string; html: string | null; text: string | null } | undefined> {
  return db.selectFrom('emails').select(['team_id', 'html', 'text']).where('id', '=', id).executeTakeFirst();
}

/** Row-locks one email of the team (for reschedule, cancel and the scheduled send). */
export async function lockEmail(trx: Transaction<SenderDb>, teamId: string, id: string): Promise<EmailRow | undefined> {
  return trx
    .selectFrom('emails')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

/** Moves a locked scheduled email to `at`; returns it as it now is. */
export async function setScheduledAt(trx: Transaction<SenderDb>, id: string, at: Date): Promise<EmailRow> {
  return trx
    .updateTable('emails')
    .set({ scheduled_at: at })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Cancels a locked scheduled email and its recipients. */
export async function cancelEmail(trx: Transaction<SenderDb>, id: string): Promise<void> {
  await trx.updateTable('emails').set({ status: 'canceled', last_event: 'canceled' }).where('id', '=', id).execute();
  await trx.updateTable('recipients').set({ status: 'canceled' }).where('email_id', '=', id).execute();
}

/** A locked scheduled email goes out now: queued, and sent as its last event; returns it as it now is. */
export async function markEmailQueued(trx: Transaction<SenderDb>, id: string): Promise<EmailRow> {
  return trx
    .updateTable('emails')
    .set({ status: 'queued', last_event: 'sent' })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The email's last event as its list shows it. */
export async function setLastEvent(trx: Transaction<SenderDb>, id: string, lastEvent: LastEvent): Promise<void> {
  await trx.updateTable('emails').set({ last_event: lastEvent }).where('id', '=', id).execute();
}

/** A recipient's position and address. */
export type PositionedRecipient = { position: number; address: string };

/** An email's recipients not yet attempted. */
export async function pendingRecipients(trx: Transaction<SenderDb>, emailId: string): Promise<PositionedRecipient[]> {
  return trx
    .selectFrom('recipients')
    .select(['position', 'address'])
    .where('email_id', '=', emailId)
    .where('status', '=', 'pending')
    .orderBy('position')
    .execute();
}

/**
 * Moves the recipient a report names (by its position in the email, or else by its address compared without
 * case) to `complained` or `bounced` with its bounce class, unless it is there already; its address and
 * domain as kept, or undefined when nothing changed.
 */
export async function setRecipientFeedback(
  trx: Transaction<SenderDb>,
  emailId: string,
  recipient: { position: number } | { address: string },
  change: Pick<RecipientRow, 'bounce_type' | 'bounce_sub_type' | 'updated_at'> & { status: 'complained' | 'bounced' },
): Promise<{ address: string; domain: string } | undefined> {
  return trx
    .updateTable('recipients')
    .set(change)
    .where('email_id', '=', emailId)
    .where((eb) =>
      'position' in recipient
        ? eb('position', '=', recipient.position)
        : eb(eb.fn('lower', ['address']), '=', recipient.address.toLowerCase()),
    )
    .where('status', '!=', change.status)
    .returning(['address', 'domain'])
    .executeTakeFirst();
}

/** The MIME of raw emails to write with their emails (in the accept's transaction). */
export type RawMimeRow = { email_id: string; mime: Buffer };

/** Writes raw emails' MIME and flags their emails raw, in one statement. */
export async function insertRawEmails(trx: Transaction<SenderDb>, rows: readonly RawMimeRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`with m as (insert into raw_emails (email_id, mime)
      select * from unnest(${rows.map((row) => row.email_id)}::uuid[], ${rows.map((row) => row.mime)}::bytea[])
      returning email_id)
    update emails set raw = true where id in (select email_id from m)`.execute(trx);
}

/**
 * Whether a loaded email (a row read with `e.*` or selectAll, as loadAttempts reads it) is a raw one, whose
 * MIME is in raw_emails. The `raw` column is not in EmailsTable (see RawEmailsTable).
 */
export function isRawEmail(email: EmailRow): boolean {
  return (email as EmailRow & { raw?: unknown }).raw === true;
}

/** A raw email's MIME as stored at accept; undefined when it has none. */
export async function findRawMime(db: Kysely<SenderDb>, emailId: string): Promise<Buffer | undefined> {
  const row = await db.selectFrom('raw_emails').select('mime').where('email_id', '=', emailId).executeTakeFirst();
  return row?.mime;
}
