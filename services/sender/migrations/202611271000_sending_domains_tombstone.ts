import { sql, type Kysely } from 'kysely';

// Frozen. A deleted sending domain stays as a tombstone (deleted, not verified) with the time of its
// deletion, so that an older state of it that arrives later (overtaken, or back from a retry tier) is
// ignored instead of bringing the domain back with its key.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sending_domains add column deleted boolean not null default false`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from sending_domains where deleted`.execute(db);
  await sql`alter table sending_domains drop column if exists deleted`.execute(db);
}
