import { sql, type Kysely } from 'kysely';

// Frozen: never edit an applied migration; add a new one.
const STATEMENTS = [
  `create table webhook_endpoints (
    id uuid primary key,
    team_id uuid not null,
    endpoint text not null,
    events text[] not null,
    status text not null check (status in ('enabled', 'disabled')),
    secret_encrypted text not null,
    previous_secret_encrypted text,
    previous_secret_expires_at timestamptz,
    failing_since timestamptz,
    disabled_reason text,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`,
  `create index webhook_endpoints_team_idx on webhook_endpoints (team_id, id)`,
  // ids are msg_<UUIDv7 hex>: time-ordered as text, so keyset pagination works on them.
  `create table webhook_events (
    id text primary key,
    endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
    team_id uuid not null,
    source_event_id uuid not null,
    type text not null,
    body text not null,
    status text not null check (status in ('pending', 'attempting', 'success', 'failed')),
    attempts_made integer not null default 0,
    next_attempt_at timestamptz,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`,
  `create unique index webhook_events_source_key on webhook_events (endpoint_id, source_event_id)`,
  `create index webhook_events_endpoint_idx on webhook_events (endpoint_id, id)`,
  `create index webhook_events_open_idx on webhook_events (created_at) where status in ('pending', 'attempting')`,
  `create table webhook_attempts (
    id text primary key,
    event_id text not null references webhook_events (id) on delete cascade,
    endpoint_id uuid not null,
    attempt integer,
    replay boolean not null default false,
    sent_at timestamptz not null,
    http_status_code integer,
    response text not null default '',
    error text,
    duration_ms integer not null
  )`,
  `create index webhook_attempts_event_idx on webhook_attempts (event_id, id)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}
