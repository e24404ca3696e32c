import { sql, type Kysely } from 'kysely';

// Frozen. An idempotency key the sender stored answers for 24 hours, as the gateway's does, and only the
// request it was used for: the gateway's hash of that request is kept with it (null for older rows), and
// rows past their day are pruned by created_at.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table accepted_requests add column request_hash text`.execute(db);
  await sql`create index accepted_requests_created_at_idx on accepted_requests (created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists accepted_requests_created_at_idx`.execute(db);
  await sql`alter table accepted_requests drop column if exists request_hash`.execute(db);
}
