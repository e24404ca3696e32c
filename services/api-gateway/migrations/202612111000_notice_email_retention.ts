import { sql, type Kysely } from 'kysely';

// Frozen. The index the retention job walks for the notices emailed to teams' admins: each team's by age.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index notice_emails_team_created_at_idx on notice_emails (team_id, created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists notice_emails_team_created_at_idx`.execute(db);
}
