import { sql, type Kysely } from 'kysely';

// Frozen. The API key an email was sent with and the gateway's request log of the request that sent it
// (GET /logs/{id}), for the emails list's `api_key_id` filter and the link from an email to its request.
// Null for emails that no API request sent (a broadcast's). No index: like the sending domain, a key
// matches a share of a team's emails, which the (team_id, id) index reads newest first, a page at a time.
// Nullable columns without a default change the catalog only (no table rewrite).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table emails add column api_key_id uuid, add column request_id uuid`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table emails drop column if exists api_key_id, drop column if exists request_id`.execute(db);
}
