import { sql, type Kysely } from 'kysely';

// Frozen. The audience: contacts (one per email per team, case-insensitive), contact properties, segments
// and their members, topics and each contact's explicit subscriptions, and contact imports.
//
// A contact's property values are kept in `contacts.properties` keyed by the property's id, not its key:
// deleting a property is then one row (its values are never read again, whatever contact still holds
// them), and a property created again with the same key starts with no values.
//
// Every list is newest first with keyset pagination on a UUIDv7 id, so each has an index that starts
// with what the list filters on and ends with the id.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table contact_properties (
    id uuid primary key,
    team_id uuid not null,
    key text not null,
    type text not null check (type in ('string', 'number')),
    fallback_value jsonb,
    created_at timestamptz not null default now(),
    unique (team_id, key)
  )`.execute(db);
  await sql`create index contact_properties_team_id on contact_properties (team_id, id)`.execute(db);

  await sql`create table contacts (
    id uuid primary key,
    team_id uuid not null,
    email text not null,
    email_key text generated always as (lower(email)) stored,
    first_name text,
    last_name text,
    unsubscribed boolean not null default false,
    properties jsonb not null default '{}',
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    unique (team_id, email_key)
  )`.execute(db);
  await sql`create index contacts_team_id on contacts (team_id, id)`.execute(db);

  await sql`create table segments (
    id uuid primary key,
    team_id uuid not null,
    name text not null,
    created_at timestamptz not null default now()
  )`.execute(db);
  await sql`create index segments_team_id on segments (team_id, id)`.execute(db);

  // A segment's contacts by contact id (the list's keyset), and a contact's segments.
  await sql`create table contact_segments (
    segment_id uuid not null references segments (id) on delete cascade,
    contact_id uuid not null references contacts (id) on delete cascade,
    team_id uuid not null,
    created_at timestamptz not null default now(),
    primary key (segment_id, contact_id)
  )`.execute(db);
  await sql`create index contact_segments_contact on contact_segments (contact_id, segment_id)`.execute(db);

  await sql`create table topics (
    id uuid primary key,
    team_id uuid not null,
    name text not null,
    description text,
    default_subscription text not null check (default_subscription in ('opt_in', 'opt_out')),
    visibility text not null default 'private' check (visibility in ('public', 'private')),
    created_at timestamptz not null default now()
  )`.execute(db);
  await sql`create index topics_team_id on topics (team_id, id)`.execute(db);

  // Only explicit choices: a contact without a row here has the topic's default subscription.
  await sql`create table contact_topics (
    contact_id uuid not null references contacts (id) on delete cascade,
    topic_id uuid not null references topics (id) on delete cascade,
    team_id uuid not null,
    subscription text not null check (subscription in ('opt_in', 'opt_out')),
    updated_at timestamptz not null default now(),
    primary key (contact_id, topic_id)
  )`.execute(db);
  await sql`create index contact_topics_topic on contact_topics (topic_id, contact_id)`.execute(db);

  await sql`create table contact_imports (
    id uuid primary key,
    team_id uuid not null,
    status text not null default 'queued' check (status in ('queued', 'in_progress', 'completed', 'failed')),
    on_conflict text not null check (on_conflict in ('upsert', 'skip')),
    column_map jsonb not null default '{}',
    segment_ids uuid[] not null default '{}',
    topics jsonb not null default '[]',
    file bytea not null,
    rows_done integer not null default 0,
    bytes_done bigint not null default 0,
    total integer not null default 0,
    created integer not null default 0,
    updated integer not null default 0,
    skipped integer not null default 0,
    failed integer not null default 0,
    error text,
    created_at timestamptz not null default now(),
    completed_at timestamptz
  )`.execute(db);
  await sql`create index contact_imports_team_id on contact_imports (team_id, id)`.execute(db);

  await sql`create table contact_import_failures (
    import_id uuid not null references contact_imports (id) on delete cascade,
    row_number integer not null,
    reason text not null,
    primary key (import_id, row_number)
  )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'contact_import_failures',
    'contact_imports',
    'contact_topics',
    'topics',
    'contact_segments',
    'segments',
    'contacts',
    'contact_properties',
  ]) {
    await sql`drop table if exists ${sql.table(table)}`.execute(db);
  }
}
