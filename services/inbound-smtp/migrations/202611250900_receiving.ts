import { sql, type Kysely } from 'kysely';

// Frozen: never edit an applied migration; add a new one.
//
// The read model of domains (from internal.domain.state), and the received emails: one raw message (shared
// by the emails it became, one per team among its recipients), each email's parsed fields, its attachments.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table receiving_domains (
    domain_id uuid primary key,
    team_id uuid not null,
    name text not null,
    return_path text not null,
    receiving_verified boolean not null,
    sending_enabled boolean not null,
    deleted boolean not null default false,
    state_at timestamptz not null
  )`.execute(db);
  // The MX looks a RCPT domain up by name and by return path.
  await sql`create index receiving_domains_name on receiving_domains (name) where not deleted`.execute(db);
  await sql`create index receiving_domains_return_path on receiving_domains (return_path) where not deleted`.execute(
    db,
  );

  await sql`create table received_raw_messages (
    id uuid primary key,
    content bytea not null,
    size integer not null,
    received_at timestamptz not null
  )`.execute(db);

  await sql`create table received_emails (
    id uuid primary key,
    team_id uuid not null,
    raw_id uuid not null references received_raw_messages (id),
    created_at timestamptz not null,
    envelope_from text not null,
    received_for text[] not null,
    remote_address text not null,
    helo text not null,
    message_id text not null,
    from_address text not null,
    to_addresses text[] not null,
    cc_addresses text[] not null,
    bcc_addresses text[] not null,
    reply_to_addresses text[] not null,
    subject text not null,
    html text,
    text text,
    headers jsonb not null,
    spf text not null,
    dkim text not null,
    dmarc text not null,
    parse_error text
  )`.execute(db);
  await sql`create index received_emails_team on received_emails (team_id, id)`.execute(db);
  await sql`create index received_emails_raw on received_emails (raw_id)`.execute(db);

  await sql`create table received_attachments (
    id uuid primary key,
    email_id uuid not null references received_emails (id) on delete cascade,
    position integer not null,
    filename text,
    content_type text not null,
    content_disposition text,
    content_id text,
    size integer not null,
    content bytea not null
  )`.execute(db);
  await sql`create index received_attachments_email on received_attachments (email_id, id)`.execute(db);
}
