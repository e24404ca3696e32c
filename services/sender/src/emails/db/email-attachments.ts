// An email's attachments as the API lists and serves them (the accept statement writes them; delivery reads
// them in attempts.ts).
import { sql, type Kysely } from 'kysely';
import { DEFAULT_PAGE_SIZE, type PaginationQuery } from '@postline/contracts';
import type { SenderDb } from '../../db/schema.ts';

/** An attachment without its bytes. */
export type AttachmentMeta = {
  id: string;
  position: number;
  filename: string | null;
  content_type: string | null;
  content_id: string | null;
  size: number;
};

/**
 * Gives the email's attachments from before ids were kept (migration 202611291000) a random id, once: only
 * their rows are locked, where giving every old row one in the migration would have locked the table.
 */
export async function assignAttachmentIds(db: Kysely<SenderDb>, emailId: string): Promise<void> {
  await db
    .updateTable('email_attachments')
    .set({ id: sql<string>`gen_random_uuid()` })
    .where('email_id', '=', emailId)
    .where('id', 'is', null)
    .execute();
}

/** An email's attachments (after assignAttachmentIds), without their bytes. */
function attachmentsOf(db: Kysely<SenderDb>, emailId: string) {
  return db
    .selectFrom('email_attachments')
    .select([
      sql<string>`id`.as('id'),
      'position',
      'filename',
      'content_type',
      'content_id',
      sql<number>`octet_length(content)`.as('size'),
    ])
    .where('email_id', '=', emailId);
}

/**
 * Attachments in the order they were given, DEFAULT_PAGE_SIZE of them when no `limit` is given;
 * `after`/`before` name an attachment of the same email.
 */
export async function pageOfAttachments(
  db: Kysely<SenderDb>,
  emailId: string,
  query: PaginationQuery,
): Promise<{ rows: AttachmentMeta[]; hasMore: boolean }> {
  const cursor = query.after ?? query.before;
  let q = attachmentsOf(db, emailId);
  if (cursor !== undefined) {
    const at = db
      .selectFrom('email_attachments')
      .select('position')
      .where('email_id', '=', emailId)
      .where('id', '=', cursor);
    q = q.where('position', query.after !== undefined ? '>' : '<', at);
  }
  const backwards = query.before !== undefined;
  q = q.orderBy('position', backwards ? 'desc' : 'asc');
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  const rows = await q.limit(limit + 1).execute();
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  if (backwards) page.reverse();
  return { rows: page, hasMore };
}

/** One attachment of the email (after assignAttachmentIds), without its bytes. */
export async function findAttachment(
  db: Kysely<SenderDb>,
  emailId: string,
  id: string,
): Promise<AttachmentMeta | undefined> {
  return attachmentsOf(db, emailId).where('id', '=', id).executeTakeFirst();
}

/**
 * An attachment a download link names, with its email's team (null when the email is gone) and, unless
 * only its size is wanted, its bytes. By ids alone: the link's signed token names them.
 */
export async function findDownload(
  db: Kysely<SenderDb>,
  emailId: string,
  id: string,
  withContent: boolean,
): Promise<(AttachmentMeta & { team_id: string | null; content?: Buffer }) | undefined> {
  return attachmentsOf(db, emailId)
    .select((eb) =>
      eb.selectFrom('emails').select('team_id').whereRef('emails.id', '=', 'email_attachments.email_id').as('team_id'),
    )
    .$if(withContent, (q) => q.select('content'))
    .where('id', '=', id)
    .executeTakeFirst();
}
