import { sql, type Kysely } from 'kysely';

// Frozen. Signup forms: a team's hosted, key-less forms (`/f/{public_id}`) that add a contact to chosen
// segments and topics, and the signups they took. A signup is one row per form and address: pending until
// its confirmation link is followed (double opt-in), then confirmed with the contact it made or updated.
// Segments and topics are kept as id arrays, not foreign keys: one deleted later is skipped at confirmation.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table signup_forms (
    id uuid primary key,
    team_id uuid not null,
    public_id text not null unique,
    name text not null,
    segment_ids uuid[] not null default '{}',
    topic_ids uuid[] not null default '{}',
    fields text[] not null default '{}',
    double_opt_in boolean not null default true,
    from_header text,
    subject text,
    redirect_url text,
    thank_you_message text,
    enabled boolean not null default true,
    submissions bigint not null default 0,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`.execute(db);
  await sql`create index signup_forms_team_id on signup_forms (team_id, id)`.execute(db);

  await sql`create table form_signups (
    id uuid primary key,
    team_id uuid not null,
    form_id uuid not null references signup_forms (id) on delete cascade,
    email text not null,
    first_name text,
    last_name text,
    status text not null check (status in ('pending', 'confirmed')),
    confirmation_sent_at timestamptz,
    confirmed_at timestamptz,
    contact_id uuid,
    created_at timestamptz not null default now(),
    unique (form_id, email)
  )`.execute(db);
  await sql`create index form_signups_form_status on form_signups (form_id, status)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists form_signups`.execute(db);
  await sql`drop table if exists signup_forms`.execute(db);
}
