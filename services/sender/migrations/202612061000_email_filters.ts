import { sql, type Kysely } from 'kysely';

// Frozen. The indexes behind GET /emails's filters that can match few of a team's emails (an address, a
// word of a subject, a broadcast): without them such a filter reads every email of the team. Filters that
// match a share of the emails (the last event, the sending domain, a time range) read the team's (team_id,
// id) index newest first and stop at a page, so they need none; the last event is left out on purpose, since
// an index on it would make every delivery's update of the row write to it. pg_trgm is a trusted extension
// (any user who may create in the database may install it), kept in this schema with the only index using it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create extension if not exists pg_trgm with schema sender`.execute(db);
  await sql`create index emails_from_idx on emails (team_id, lower(from_address), id)`.execute(db);
  await sql`create index emails_subject_trgm_idx on emails using gin (subject gin_trgm_ops)`.execute(db);
  await sql`create index emails_broadcast_idx on emails (team_id, broadcast_id, id) where broadcast_id is not null`.execute(
    db,
  );
  await sql`create index recipients_team_address_idx on recipients (team_id, lower(address), email_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists emails_from_idx`.execute(db);
  await sql`drop index if exists emails_subject_trgm_idx`.execute(db);
  await sql`drop index if exists emails_broadcast_idx`.execute(db);
  await sql`drop index if exists recipients_team_address_idx`.execute(db);
}
