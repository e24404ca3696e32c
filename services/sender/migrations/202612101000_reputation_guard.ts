import { sql, type Kysely } from 'kysely';

// Frozen. The reputation guard: rolling bounce and complaint rates per team and per sending domain over
// their last sends, and the pauses it makes when a rate crosses its line.
//
// reputation_deltas: what each recorded delivery attempt or feedback report adds (sends, bounces,
// complaints) for its team and sending domain. Appended without conflicts, in the transaction that records
// the outcome, so that concurrent deliveries never wait on one counter row; folded every few seconds.
//
// reputation_windows: one row per team (domain_id nil) and per sending domain: how many sends it has
// folded in all (which numbers its buckets) and since when it counts (set by a resume, which forgets what
// came before; null: from the first send).
//
// reputation_buckets: the window itself, a ring of buckets of about window/10 sends each; the last ten
// make the window, older ones are deleted as new ones open.
//
// reputation_pauses: a paused team (domain_id nil) or sending domain, with why, what was measured and the
// line (the threshold in force) it crossed.
//
// parked_deliveries: the delivery commands of a paused team or domain, kept (not failed) until a resume
// sends them again.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table reputation_deltas (
    id bigint generated always as identity primary key,
    team_id uuid not null,
    domain_id uuid not null,
    recorded_at timestamptz not null,
    sends int not null,
    bounces int not null,
    complaints int not null
  )`.execute(db);
  await sql`create table reputation_windows (
    team_id uuid not null,
    domain_id uuid not null,
    total_sends bigint not null default 0,
    counts_since timestamptz,
    primary key (team_id, domain_id)
  )`.execute(db);
  await sql`create table reputation_buckets (
    team_id uuid not null,
    domain_id uuid not null,
    bucket bigint not null,
    sends bigint not null,
    bounces bigint not null,
    complaints bigint not null,
    primary key (team_id, domain_id, bucket)
  )`.execute(db);
  await sql`create table reputation_pauses (
    team_id uuid not null,
    domain_id uuid not null,
    domain_name text,
    reason text not null check (reason in ('bounce_rate', 'complaint_rate')),
    sends bigint not null,
    bounce_rate float8 not null,
    complaint_rate float8 not null,
    line float8 not null,
    paused_at timestamptz not null,
    primary key (team_id, domain_id)
  )`.execute(db);
  await sql`create table parked_deliveries (
    id bigint generated always as identity primary key,
    team_id uuid not null,
    domain_id uuid not null,
    command jsonb not null,
    parked_at timestamptz not null
  )`.execute(db);
  await sql`create index parked_deliveries_team on parked_deliveries (team_id, domain_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists parked_deliveries`.execute(db);
  await sql`drop table if exists reputation_pauses`.execute(db);
  await sql`drop table if exists reputation_buckets`.execute(db);
  await sql`drop table if exists reputation_windows`.execute(db);
  await sql`drop table if exists reputation_deltas`.execute(db);
}
