import { sql, type Kysely } from 'kysely';

// Frozen. The indexes behind GET /emails's filters that can match few of a team's emails (an address, a
// word of a subject, a broadcast): without them such a filter reads every email of the team. Filters that
// match a share of the emails (the last event, the sending domain, a time range) read the team's (team_id,
// id) index newest first and stop at a page, so they need none; the last event is left out on purpose, since
// an index on it would make every delivery's update of the row write to it. pg_trgm is a trusted extension
// (any user who may create in the database may install it), kept in this schema with the only index using it.
//
// The indexes are built in the migration's transaction, which holds writes to emails and recipients until
// they are built: on an install with millions of emails, plan the upgrade for a quiet hour.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create extension if not exists pg_trgm with schema sender`.execute(db);
  // Installed earlier in another schema (a managed Postgres's `extensions`), it stays there: name its
  // operator class by that schema, which the service's search path does not include.
  const { rows } = await sql<{ schema: string }>`select n.nspname as schema from pg_extension e
    join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db);
  const opclass = sql`${sql.id(rows[0]?.schema ?? 'sender')}.gin_trgm_ops`;
  await sql`create index emails_from_idx on emails (team_id, lower(from_address), id)`.execute(db);
  await sql`create index emails_subject_trgm_idx on emails using gin (subject ${opclass})`.execute(db);
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
