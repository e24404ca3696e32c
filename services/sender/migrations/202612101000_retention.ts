import { sql, type Kysely } from 'kysely';
import { createTeamRetentionTable } from '@postline/platform';

// Frozen. Retention: the teams' retention as the gateway pushes it (team_retention), and the indexes the
// retention job walks: each team's emails by age, and each team's finished contact imports by when they
// finished. An email's other rows (recipients, attempts, events, engagements, its raw message) go with it
// through their email_id keys. A broadcast's results and clicked links, counted from its emails' rows,
// are kept on the broadcast (final_results) before the first of those rows goes.
export async function up(db: Kysely<unknown>): Promise<void> {
  await createTeamRetentionTable(db);
  await sql`create index emails_team_created_at_idx on emails (team_id, created_at)`.execute(db);
  await sql`create index contact_imports_team_completed_at_idx on contact_imports (team_id, completed_at)
    where completed_at is not null`.execute(db);
  await sql`alter table broadcasts add column final_results jsonb`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table broadcasts drop column if exists final_results`.execute(db);
  await sql`drop index if exists contact_imports_team_completed_at_idx`.execute(db);
  await sql`drop index if exists emails_team_created_at_idx`.execute(db);
  await sql`drop table if exists team_retention`.execute(db);
}
