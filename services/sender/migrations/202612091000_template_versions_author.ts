import { sql, type Kysely } from 'kysely';

// Frozen. A template version's history: who last wrote it (a dashboard user or an API key, by id; null for
// versions written before this migration) and when it was last made the published one. Versions that are
// published now take their template's publication time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table template_versions
    add column author_type text,
    add column author_id uuid,
    add column published_at timestamptz,
    add constraint template_versions_author_type check (author_type in ('user', 'api_key')),
    add constraint template_versions_author check ((author_type is null) = (author_id is null))`.execute(db);
  await sql`update template_versions v set published_at = t.published_at
    from templates t where t.published_version_id = v.id`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table template_versions
    drop constraint if exists template_versions_author,
    drop constraint if exists template_versions_author_type,
    drop column if exists published_at,
    drop column if exists author_id,
    drop column if exists author_type`.execute(db);
}
