import { sql, type Kysely } from 'kysely';

// Frozen. The reputation guard's lines the operator set for a team, as the gateway pushes them (each null:
// the install's REPUTATION_*); changed_at orders the pushes, the latest kept. And, on each window, the
// bucket size its buckets were cut by (null for windows from before: cut by the install's window), so
// that a window whose team's window changed is cut again by the new size rather than misread.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table team_reputation_thresholds (
    team_id uuid primary key,
    bounce_rate float8 check (bounce_rate > 0 and bounce_rate <= 1),
    complaint_rate float8 check (complaint_rate > 0 and complaint_rate <= 1),
    window_sends integer check (window_sends > 0),
    min_sends integer check (min_sends > 0),
    changed_at timestamptz not null
  )`.execute(db);
  await sql`alter table reputation_windows add column bucket_sends integer`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table reputation_windows drop column if exists bucket_sends`.execute(db);
  await sql`drop table if exists team_reputation_thresholds`.execute(db);
}
