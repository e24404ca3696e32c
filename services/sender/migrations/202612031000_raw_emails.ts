import { sql, type Kysely } from 'kysely';

// Frozen. Raw emails (POST /emails with message/rfc822, the SMTP relay's submissions): the client's MIME
// as it is delivered, one row per email, and on the email a flag the delivery reads with the row it loads
// anyway, so that a composed email's attempt costs no extra query. The column's constant default changes
// the catalog only (no table rewrite).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table raw_emails (
    email_id uuid primary key references emails (id) on delete cascade,
    mime bytea not null
  )`.execute(db);
  await sql`alter table emails add column raw boolean not null default false`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table emails drop column if exists raw`.execute(db);
  await sql`drop table if exists raw_emails`.execute(db);
}
