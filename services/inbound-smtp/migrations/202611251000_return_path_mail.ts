import { sql, type Kysely } from 'kysely';

// Frozen: never edit an applied migration; add a new one.
//
// Mail received at return-path domains (bounces, complaints, unsubscribe requests): one row per message and
// RCPT, with what became of it, so an operator can see what came in. The raw message is not kept, only a
// bounded excerpt of its report. The MX's redelivery of the same message (a lost 250) finds its row and
// causes nothing again.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table return_path_mail (
    id uuid primary key,
    team_id uuid not null,
    received_at timestamptz not null,
    recipient text not null,
    message_sha256 bytea not null,
    envelope_from text not null,
    remote_address text not null,
    outcome text not null,
    email_id uuid,
    detail text not null,
    feedback_count integer not null,
    excerpt text not null
  )`.execute(db);
  await sql`create unique index return_path_mail_message on return_path_mail (message_sha256, recipient)`.execute(db);
  await sql`create index return_path_mail_team on return_path_mail (team_id, id)`.execute(db);
}
