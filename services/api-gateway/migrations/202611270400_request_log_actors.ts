import { sql, type Kysely } from 'kysely';

// Frozen. A request log names the signed-in user who made it (a session's request has no API key), and the logs
// of one API key are found without reading the whole team's (GET /logs?api_key_id=).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table request_logs add column user_id uuid`.execute(db);
  await sql`create index request_logs_key_idx on request_logs (team_id, api_key_id, id desc) where api_key_id is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index request_logs_key_idx`.execute(db);
  await sql`alter table request_logs drop column user_id`.execute(db);
}
