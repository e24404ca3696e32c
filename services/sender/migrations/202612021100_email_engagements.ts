import { sql, type Kysely } from 'kysely';

// Frozen. Opens and clicks of sent emails, one row each, recorded in batches off the request path of the
// tracking pixel (`/o/{token}`) and the tracking redirect (`/c/{token}`). `machine` is the open's
// machine_open or the click's scanner_click (domain/engagement-signals.ts). `link` is the clicked URL, null
// for an open. The broadcast lists (recipients?type=opened|clicked, clicked-links) read by email_id.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table email_engagements (
    id uuid primary key,
    team_id uuid not null,
    email_id uuid not null,
    kind text not null check (kind in ('open', 'click')),
    link text,
    ip text not null,
    user_agent text not null,
    machine boolean not null,
    created_at timestamptz not null
  )`.execute(db);
  await sql`create index email_engagements_email on email_engagements (email_id, kind)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists email_engagements`.execute(db);
}
