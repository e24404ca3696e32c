// Received emails, their raw messages and attachments.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { PaginationQuery } from '@postline/contracts';
import { NOTIFY_RELAY, outboxSource, paginate, PREPARED, type OutboxRow, type Page } from '@postline/platform';
import type { InboundDb } from './schema.ts';
import type {
  ReceivedAttachmentRow,
  ReceivedAttachmentsTable,
  ReceivedEmailRow,
  ReceivedEmailsTable,
  ReceivedRawMessagesTable,
} from './receiving-tables.ts';

/** A received message's rows: the raw bytes, one email per team, their attachments. */
export type ReceivedMessageRows = {
  raw: ReceivedRawMessagesTable;
  emails: ReceivedEmailsTable[];
  attachments: ReceivedAttachmentsTable[];
};

/**
 * Writes a received message's rows and the outbox rows of its events in one statement (one round trip; the
 * MX answers each message after it), notifying the outbox relay at commit. The emails go in as one JSON
 * record set, the attachments as one array per column, so the text never varies.
 */
export async function insertReceivedMessage(
  db: Kysely<InboundDb> | Transaction<InboundDb>,
  rows: ReceivedMessageRows,
  outbox: readonly OutboxRow[],
): Promise<void> {
  const { raw, attachments: a } = rows;
  await sql`with raw as (
      insert into received_raw_messages (id, content, size, received_at)
      values (${raw.id}, ${raw.content}, ${raw.size}, ${raw.received_at})
    ), emails as (
      insert into received_emails select * from jsonb_populate_recordset(null::received_emails, ${JSON.stringify(rows.emails)}::jsonb)
    ), attachments as (
      insert into received_attachments (id, email_id, position, filename, content_type, content_disposition, content_id, size, content)
      select * from unnest(${a.map((x) => x.id)}::uuid[], ${a.map((x) => x.email_id)}::uuid[], ${a.map((x) => x.position)}::int[],
        ${a.map((x) => x.filename)}::text[], ${a.map((x) => x.content_type)}::text[], ${a.map((x) => x.content_disposition)}::text[],
        ${a.map((x) => x.content_id)}::text[], ${a.map((x) => x.size)}::int[], ${a.map((x) => x.content)}::bytea[])
    ), o as (
      insert into outbox (id, exchange, routing_key, envelope) ${outboxSource(outbox)} on conflict (id) do nothing
    )
    select ${PREPARED} ${NOTIFY_RELAY}`.execute(db);
}

/** The attachment fields every read shows (not the content). */
export type AttachmentMeta = Omit<ReceivedAttachmentRow, 'content'>;

const ATTACHMENT_META = [
  'id',
  'email_id',
  'position',
  'filename',
  'content_type',
  'content_disposition',
  'content_id',
  'size',
] as const;

/** One received email of the team, or undefined. */
export async function findReceivedEmail(
  db: Kysely<InboundDb>,
  teamId: string,
  id: string,
): Promise<ReceivedEmailRow | undefined> {
  const { rows } = await sql<ReceivedEmailRow>`select ${PREPARED} * from received_emails
    where team_id = ${teamId} and id = ${id}`.execute(db);
  return rows[0];
}

/** One received email by its id alone (a link's token named it). */
export async function findReceivedEmailById(db: Kysely<InboundDb>, id: string): Promise<ReceivedEmailRow | undefined> {
  return db.selectFrom('received_emails').selectAll().where('id', '=', id).executeTakeFirst() as Promise<
    ReceivedEmailRow | undefined
  >;
}

/** A page of the team's received emails, newest first (every one when `limit` is absent). */
export async function listReceivedEmails(
  db: Kysely<InboundDb>,
  teamId: string,
  query: PaginationQuery,
): Promise<Page<Omit<ReceivedEmailRow, 'html' | 'text' | 'headers'>>> {
  return paginate(
    db
      .selectFrom('received_emails')
      .select([
        'id',
        'team_id',
        'raw_id',
        'created_at',
        'envelope_from',
        'received_for',
        'remote_address',
        'helo',
        'message_id',
        'from_address',
        'to_addresses',
        'cc_addresses',
        'bcc_addresses',
        'reply_to_addresses',
        'subject',
        'spf',
        'dkim',
        'dmarc',
        'parse_error',
      ])
      .where('team_id', '=', teamId),
    query,
  );
}

/** The attachments (without content) of these emails, by email id, in their order. */
export async function attachmentsOf(
  db: Kysely<InboundDb>,
  emailIds: readonly string[],
): Promise<Map<string, AttachmentMeta[]>> {
  const byEmail = new Map<string, AttachmentMeta[]>(emailIds.map((id) => [id, []]));
  if (emailIds.length === 0) return byEmail;
  const rows = await db
    .selectFrom('received_attachments')
    .select(ATTACHMENT_META)
    .where('email_id', 'in', emailIds)
    .orderBy('email_id')
    .orderBy('position')
    .execute();
  for (const row of rows) byEmail.get(row.email_id)?.push(row);
  return byEmail;
}

/** The inline parts (with content) of an email that its html may reference by Content-ID. */
export async function inlineParts(db: Kysely<InboundDb>, emailId: string): Promise<ReceivedAttachmentRow[]> {
  return db
    .selectFrom('received_attachments')
    .selectAll()
    .where('email_id', '=', emailId)
    .where('content_id', 'is not', null)
    .orderBy('position')
    .execute();
}

/** A page of an email's attachments (the email found first, so of the team), newest id first. */
export async function pageOfAttachments(
  db: Kysely<InboundDb>,
  emailId: string,
  query: PaginationQuery,
): Promise<Page<AttachmentMeta>> {
  return paginate(db.selectFrom('received_attachments').select(ATTACHMENT_META).where('email_id', '=', emailId), query);
}

/** One attachment of an email (found first, so of the team), or undefined. */
export async function findAttachment(
  db: Kysely<InboundDb>,
  emailId: string,
  attachmentId: string,
): Promise<AttachmentMeta | undefined> {
  return db
    .selectFrom('received_attachments')
    .select(ATTACHMENT_META)
    .where('email_id', '=', emailId)
    .where('id', '=', attachmentId)
    .executeTakeFirst();
}

/** What a raw download link serves: the email's team and its raw message (content unless only its size is wanted). */
export async function findRawDownload(
  db: Kysely<InboundDb>,
  emailId: string,
  withContent: boolean,
): Promise<{ team_id: string; size: number; content: Buffer | undefined } | undefined> {
  const row = await db
    .selectFrom('received_emails as e')
    .innerJoin('received_raw_messages as r', 'r.id', 'e.raw_id')
    .select(['e.team_id', 'r.size'])
    .$if(withContent, (q) => q.select('r.content'))
    .where('e.id', '=', emailId)
    .executeTakeFirst();
  return row && { team_id: row.team_id, size: row.size, content: (row as { content?: Buffer }).content };
}

/** What an attachment download link serves, and the email's team. */
export async function findAttachmentDownload(
  db: Kysely<InboundDb>,
  emailId: string,
  attachmentId: string,
  withContent: boolean,
): Promise<(AttachmentMeta & { team_id: string; content: Buffer | undefined }) | undefined> {
  const row = await db
    .selectFrom('received_attachments as a')
    .innerJoin('received_emails as e', 'e.id', 'a.email_id')
    .select([
      'e.team_id',
      'a.id',
      'a.email_id',
      'a.position',
      'a.filename',
      'a.content_type',
      'a.content_disposition',
      'a.content_id',
      'a.size',
    ])
    .$if(withContent, (q) => q.select('a.content'))
    .where('a.email_id', '=', emailId)
    .where('a.id', '=', attachmentId)
    .executeTakeFirst();
  return row && { ...row, content: (row as { content?: Buffer }).content };
}
