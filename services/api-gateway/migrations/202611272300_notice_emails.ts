import { sql, type Kysely } from 'kysely';

// Frozen. The gateway's own emails to people about their team (a webhook endpoint disabled), one row per
// message and person: the key makes a redelivered message add nothing, and a row stays until it is sent.
const UP = [
  `create table notice_emails (
    message_id uuid not null,
    user_id uuid not null,
    team_id uuid not null,
    to_address text not null,
    subject text not null,
    text text not null,
    attempts integer not null default 0,
    next_attempt_at timestamptz not null default now(),
    sent_at timestamptz,
    created_at timestamptz not null default now(),
    primary key (message_id, user_id)
  )`,
  `create index notice_emails_due_idx on notice_emails (next_attempt_at) where sent_at is null`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of UP) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table notice_emails`.execute(db);
}
