import { sql, type Kysely } from 'kysely';

// Frozen. Invitations to a team and password resets: single-use, expiring links whose tokens are stored hashed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table invites (
      id uuid primary key,
      team_id uuid not null references teams(id),
      email text not null,
      role text not null check (role in ('admin', 'member')),
      token_hash text not null unique,
      invited_by uuid not null references users(id) on delete cascade,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      accepted_at timestamptz,
      revoked_at timestamptz
    )`.execute(db);
  await sql`create index invites_team_idx on invites (team_id, id desc)`.execute(db);
  await sql`
    create table password_resets (
      token_hash text primary key,
      user_id uuid not null references users(id) on delete cascade,
      created_by uuid not null references users(id) on delete cascade,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table password_resets`.execute(db);
  await sql`drop table invites`.execute(db);
}
