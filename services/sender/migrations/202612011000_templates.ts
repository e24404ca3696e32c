import { sql, type Kysely } from 'kysely';

// Frozen. Templates and their versions. A template row holds what is not versioned (name, alias) and points
// at two versions: the current one (what GET shows and PATCH edits) and the published one (what sends use).
// Publishing points the published version at the current one; a PATCH after that starts a new current
// version, so the published one keeps sending, unchanged, until the next publish.
//
// `current_version_id` has no foreign key: the template and its first version are written in one
// transaction, template first. A version's variables are a jsonb array kept whole with it (at most 50).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table templates (
    id uuid primary key,
    team_id uuid not null,
    name text not null,
    alias text,
    current_version_id uuid not null,
    published_version_id uuid,
    published_at timestamptz,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    unique (team_id, alias)
  )`.execute(db);
  await sql`create index templates_team_id on templates (team_id, id)`.execute(db);

  await sql`create table template_versions (
    id uuid primary key,
    template_id uuid not null references templates (id) on delete cascade,
    team_id uuid not null,
    from_header text,
    subject text,
    reply_to text[],
    html text not null,
    text text,
    variables jsonb not null default '[]',
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`.execute(db);
  await sql`create index template_versions_template on template_versions (template_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists template_versions`.execute(db);
  await sql`drop table if exists templates`.execute(db);
}
