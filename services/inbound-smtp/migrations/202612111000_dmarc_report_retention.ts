import { sql, type Kysely } from 'kysely';

// Frozen. The index the retention job walks for DMARC reports: each team's reports by the end of the period
// they cover (a report goes once that end is older than the longer of its team's retention and 90 days).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index dmarc_reports_team_end_at on dmarc_reports (team_id, end_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists dmarc_reports_team_end_at`.execute(db);
}
