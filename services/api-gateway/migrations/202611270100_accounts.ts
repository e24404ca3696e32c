import { sql, type Kysely } from 'kysely';

// Frozen. People who sign in to the dashboard: users, their teams with a role, server-side sessions (only a
// token's hash is stored) and the one-time setup links that create the first account.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table users (
      id uuid primary key,
      email text not null,
      name text not null,
      password_hash text not null,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create unique index users_email_idx on users (lower(email))`.execute(db);
  await sql`
    create table team_members (
      team_id uuid not null references teams(id),
      user_id uuid not null references users(id) on delete cascade,
      role text not null check (role in ('admin', 'member')),
      created_at timestamptz not null default now(),
      primary key (team_id, user_id)
    )`.execute(db);
  await sql`create index team_members_user_idx on team_members (user_id)`.execute(db);
  await sql`
    create table sessions (
      id uuid primary key,
      user_id uuid not null references users(id) on delete cascade,
      team_id uuid not null references teams(id),
      token_hash text not null unique,
      ip text,
      user_agent text,
      created_at timestamptz not null default now(),
      last_seen_at timestamptz not null,
      expires_at timestamptz not null,
      revoked_at timestamptz
    )`.execute(db);
  await sql`create index sessions_user_idx on sessions (user_id, id desc) where revoked_at is null`.execute(db);
  await sql`
    create table setup_tokens (
      token_hash text primary key,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['setup_tokens', 'sessions', 'team_members', 'users']) {
    await sql`drop table ${sql.id(table)}`.execute(db);
  }
}
