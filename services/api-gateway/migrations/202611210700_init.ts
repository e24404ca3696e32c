import { sql, type Kysely } from 'kysely';

// Frozen: never edit an applied migration; add a new one.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table teams (
      id uuid primary key,
      name text not null,
      access_enabled boolean not null default true,
      rate_limit_per_second integer check (rate_limit_per_second > 0),
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`
    create table api_keys (
      id uuid primary key,
      team_id uuid not null references teams(id),
      name text not null,
      permission text not null check (permission in ('full_access', 'sending_access')),
      domain_id uuid,
      token_hash text not null unique,
      token_last4 text not null,
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      expires_at timestamptz,
      revoked_at timestamptz,
      check (domain_id is null or permission = 'sending_access')
    )`.execute(db);
  await sql`create index api_keys_team_idx on api_keys (team_id, id desc) where revoked_at is null`.execute(db);
  await sql`
    create table request_logs (
      id uuid primary key,
      team_id uuid not null,
      api_key_id uuid,
      endpoint text not null,
      method text not null,
      response_status integer not null,
      user_agent text,
      request_body jsonb,
      response_body jsonb,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index request_logs_team_idx on request_logs (team_id, id desc)`.execute(db);
  await sql`
    create table idempotency_keys (
      team_id uuid not null,
      key text not null,
      request_hash text not null,
      state text not null check (state in ('in_flight', 'done')),
      response_status integer,
      response_headers jsonb,
      response_body bytea,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      primary key (team_id, key)
    )`.execute(db);
  await sql`create index idempotency_keys_expiry_idx on idempotency_keys (expires_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table idempotency_keys, request_logs, api_keys, teams`.execute(db);
}
