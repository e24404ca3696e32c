import { sql, type Kysely } from 'kysely';

/**
 * The read model of the teams' retention that each owner of rows that age out keeps in its own schema,
 * from the gateway's pushes (PUT /internal/team-retention). A team without a row keeps the default
 * (DEFAULT_RETENTION_DAYS). `changed_at` is when the operator set it: an older push never overwrites a newer.
 */
export type TeamRetentionTable = { team_id: string; days: number; changed_at: Date };

/**
 * Creates `team_retention` in the schema the connection resolves to (the service's own). Frozen: call it
 * from one migration; a change is a new statement in a new migration.
 */
export async function createTeamRetentionTable<DB>(db: Kysely<DB>): Promise<void> {
  await sql`create table team_retention (
    team_id uuid primary key,
    days integer not null check (days > 0),
    changed_at timestamptz not null
  )`.execute(db);
}

/** Each team with a retention of its own, and its days. */
export async function readTeamRetention<DB>(db: Kysely<DB>): Promise<Map<string, number>> {
  const { rows } = await sql<{ team_id: string; days: number }>`select team_id, days from team_retention`.execute(db);
  return new Map(rows.map((row) => [row.team_id, row.days]));
}

/** Stores a team's retention unless a later change is stored already (pushes may be repeated or reordered). */
export async function saveTeamRetention<DB>(
  db: Kysely<DB>,
  teamId: string,
  setting: { days: number; changedAt: Date },
): Promise<void> {
  await sql`insert into team_retention (team_id, days, changed_at)
    values (${teamId}::uuid, ${setting.days}, ${setting.changedAt})
    on conflict (team_id) do update set days = excluded.days, changed_at = excluded.changed_at
    where team_retention.changed_at <= excluded.changed_at`.execute(db);
}
