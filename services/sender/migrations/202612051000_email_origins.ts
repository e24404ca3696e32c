import { sql, type Kysely } from 'kysely';

// Frozen. Where an email came from, for its events (`broadcast_id`, `template_id`) and GET /emails/{id}
// (`topic_id`): the broadcast that made it, the template it was sent with, the topic it was sent under. No
// foreign keys: a broadcast, template or topic deleted later leaves its emails' ids as they were sent.
// Nullable columns without a default change the catalog only (no table rewrite).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table emails
    add column broadcast_id uuid,
    add column template_id uuid,
    add column topic_id uuid`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table emails
    drop column if exists broadcast_id,
    drop column if exists template_id,
    drop column if exists topic_id`.execute(db);
}
