import { sql, type Kysely } from 'kysely';

// Frozen. A team's retention, set by the operator (null: the default, DEFAULT_RETENTION_DAYS), and whether
// the owners of rows that age out (sender, inbound-smtp, webhook-dispatcher) have yet to be told of its last
// change: the retention-sync job pushes it until each has answered, then clears the mark. The index the
// retention job walks: each team's request logs by age.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table teams
    add column retention_days integer check (retention_days > 0),
    add column retention_changed_at timestamptz,
    add column retention_unsynced boolean not null default false`.execute(db);
  await sql`create index teams_retention_unsynced_idx on teams (id) where retention_unsynced`.execute(db);
  await sql`create index request_logs_team_created_at_idx on request_logs (team_id, created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists request_logs_team_created_at_idx`.execute(db);
  await sql`drop index if exists teams_retention_unsynced_idx`.execute(db);
  await sql`alter table teams drop column retention_days, drop column retention_changed_at,
    drop column retention_unsynced`.execute(db);
}
