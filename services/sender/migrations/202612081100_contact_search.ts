import { sql, type Kysely } from 'kysely';

// Frozen. GET /contacts's search (`q`: a part of the email or the name, any case) reads a trigram index of
// the contact's email and names, so that a search finds a team's few matches among a million contacts
// without reading them all. The expression is the one contactSearchText (audience/db/contacts.ts) writes.
// Built in the migration's transaction, which holds writes to contacts meanwhile.
export async function up(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ schema: string }>`select n.nspname as schema from pg_extension e
    join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'`.execute(db);
  const opclass = sql`${sql.id(rows[0]?.schema ?? 'sender')}.gin_trgm_ops`;
  await sql`create index contacts_search_trgm_idx on contacts using gin
    ((lower(email || ' ' || coalesce(first_name, '') || ' ' || coalesce(last_name, ''))) ${opclass})`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists contacts_search_trgm_idx`.execute(db);
}
