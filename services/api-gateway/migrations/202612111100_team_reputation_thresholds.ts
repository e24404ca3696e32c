import { sql, type Kysely } from 'kysely';

// Frozen. A team's own reputation guard lines, set by the operator (each null: the install's REPUTATION_*
// in the sender), and whether the sender has yet to be told of their last change: the reputation-sync job
// pushes it until the sender has answered, then clears the mark.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table teams
    add column reputation_bounce_rate double precision
      check (reputation_bounce_rate > 0 and reputation_bounce_rate <= 1),
    add column reputation_complaint_rate double precision
      check (reputation_complaint_rate > 0 and reputation_complaint_rate <= 1),
    add column reputation_window integer check (reputation_window > 0),
    add column reputation_min_sends integer check (reputation_min_sends > 0),
    add column reputation_changed_at timestamptz,
    add column reputation_unsynced boolean not null default false`.execute(db);
  await sql`create index teams_reputation_unsynced_idx on teams (id) where reputation_unsynced`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists teams_reputation_unsynced_idx`.execute(db);
  await sql`alter table teams drop column reputation_bounce_rate, drop column reputation_complaint_rate,
    drop column reputation_window, drop column reputation_min_sends, drop column reputation_changed_at,
    drop column reputation_unsynced`.execute(db);
}
