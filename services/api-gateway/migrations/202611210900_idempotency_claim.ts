import { sql, type Kysely } from 'kysely';

// Frozen. Each claim gets its own id so that a request completes or releases only its own claim, never
// one taken over after it went stale.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table idempotency_keys add column claim_id uuid`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table idempotency_keys drop column claim_id`.execute(db);
}
