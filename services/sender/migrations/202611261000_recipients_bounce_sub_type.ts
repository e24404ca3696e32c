import { sql, type Kysely } from 'kysely';

// Frozen. A recipient's bounce subtype beside its type: repeated transient bounces make a temporary
// suppression only when they were about the mailbox (General, MailboxFull), not the message or our own
// sending (ContentRejected, AttachmentRejected, MessageTooLarge). Null on rows from before.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table recipients add column bounce_sub_type text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table recipients drop column if exists bounce_sub_type`.execute(db);
}
