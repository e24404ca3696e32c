import { sql, type Kysely } from 'kysely';
import { createTeamRetentionTable } from '@postline/platform';

// Frozen. Retention: the teams' retention as the gateway pushes it (team_retention), and the indexes the
// retention job walks: each team's received emails and return-path mail by age.
export async function up(db: Kysely<unknown>): Promise<void> {
  await createTeamRetentionTable(db);
  await sql`create index received_emails_team_created_at on received_emails (team_id, created_at)`.execute(db);
  await sql`create index return_path_mail_team_received_at on return_path_mail (team_id, received_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists return_path_mail_team_received_at`.execute(db);
  await sql`drop index if exists received_emails_team_created_at`.execute(db);
  await sql`drop table if exists team_retention`.execute(db);
}
