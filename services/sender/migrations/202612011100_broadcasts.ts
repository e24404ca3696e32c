import { sql, type Kysely } from 'kysely';

// Frozen. Broadcasts and the contacts each one went to.
//
// A broadcast is expanded into emails page by page (keyset on contact id); `fan_out_after` is the last
// contact id of the pages committed so far, advanced in each page's transaction, so a fan-out that stops
// anywhere resumes after it. `broadcast_recipients` holds one row per contact a broadcast reached: its
// primary key is what makes "one email per broadcast per contact" hold whatever is redelivered.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table broadcasts (
    id uuid primary key,
    team_id uuid not null,
    name text,
    segment_id uuid,
    from_header text,
    subject text,
    reply_to text[] not null default '{}',
    preview_text text,
    html text,
    text text,
    topic_id uuid,
    status text not null default 'draft' check (status in ('draft', 'scheduled', 'queued', 'sent', 'canceled')),
    scheduled_at timestamptz,
    sent_at timestamptz,
    fan_out_after uuid,
    created_at timestamptz not null default now()
  )`.execute(db);
  await sql`create index broadcasts_team_id on broadcasts (team_id, id)`.execute(db);

  // email_id null: the contact's address was on the suppression list, so no email was made.
  await sql`create table broadcast_recipients (
    broadcast_id uuid not null references broadcasts (id) on delete cascade,
    contact_id uuid not null,
    team_id uuid not null,
    email text not null,
    email_id uuid,
    id uuid not null,
    primary key (broadcast_id, contact_id)
  )`.execute(db);
  // The recipients list's keyset (newest first on the row's own id).
  await sql`create index broadcast_recipients_list on broadcast_recipients (broadcast_id, id)`.execute(db);
  await sql`create index broadcast_recipients_email on broadcast_recipients (email_id) where email_id is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists broadcast_recipients`.execute(db);
  await sql`drop table if exists broadcasts`.execute(db);
}
