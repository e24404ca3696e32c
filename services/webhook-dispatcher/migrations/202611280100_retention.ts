import { sql, type Kysely } from 'kysely';
import { createTeamRetentionTable } from '@postline/platform';

// Frozen. Retention: the teams' retention as the gateway pushes it (team_retention), and the index the
// retention job walks: each team's webhook events by age (their attempts go with them).
export async function up(db: Kysely<unknown>): Promise<void> {
  await createTeamRetentionTable(db);
  await sql`create index webhook_events_team_created_at_idx on webhook_events (team_id, created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists webhook_events_team_created_at_idx`.execute(db);
  await sql`drop table if exists team_retention`.execute(db);
}
