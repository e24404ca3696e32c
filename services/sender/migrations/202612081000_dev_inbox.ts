import { sql, type Kysely } from 'kysely';

// Frozen. The development inbox: each message the MTA kept in the install instead of sending it (every
// message while DEV_INBOX is on; the onboarding sender's to a team's members always), as it would have gone
// out, signed. One row per SMTP transaction it stands for: a command delivered twice keeps one copy. Listed
// newest first per team; kept for DEV_INBOX_RETENTION_DAYS.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table dev_inbox_messages (
    id uuid primary key,
    team_id uuid not null,
    email_id uuid not null,
    envelope_from text not null,
    recipients text[] not null,
    raw bytea not null,
    size integer not null,
    kept_at timestamptz not null default now()
  )`.execute(db);
  // A transaction by its first recipient: a recipient is in one transaction of an email (a kept message is
  // never deferred, so never tried again), and one address fits a btree entry where fifty might not.
  await sql`create unique index dev_inbox_messages_transaction
    on dev_inbox_messages (email_id, (recipients[1]))`.execute(db);
  await sql`create index dev_inbox_messages_kept_at on dev_inbox_messages (kept_at)`.execute(db);
  await sql`create index dev_inbox_messages_team on dev_inbox_messages (team_id, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists dev_inbox_messages`.execute(db);
}
