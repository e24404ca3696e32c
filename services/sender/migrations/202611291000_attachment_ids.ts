import { sql, type Kysely } from 'kysely';

// Frozen. Each attachment of a sent email gets its own id, as the reference's
// `GET /emails/{email_id}/attachments/{id}` names it. New rows get a UUIDv7 from the accept statement.
// Both statements change the catalog only: a column with a default for every existing row would rewrite
// the table (all the attachments' bytes) under a lock that stops every accept and delivery meanwhile. Rows
// from before stay without an id until their email's attachments are first read (`assignAttachmentIds`).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table email_attachments add column id uuid`.execute(db);
  await sql`alter table email_attachments alter column id set default gen_random_uuid()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table email_attachments drop column if exists id`.execute(db);
}
