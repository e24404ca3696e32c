import { sql, type Kysely } from 'kysely';

// Frozen. An endpoint's failed events by creation time: what a bulk replay (POST /webhooks/{id}/events/replay)
// reads, without scanning the endpoint's delivered ones.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index webhook_events_failed_idx on webhook_events (endpoint_id, created_at) where status = 'failed'`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index webhook_events_failed_idx`.execute(db);
}
