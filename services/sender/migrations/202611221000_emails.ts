import { sql, type Kysely } from 'kysely';

// Frozen: never edit an applied migration; add a new one.
const STATEMENTS = [
  // Read model of the domain-verifier's domains (internal.domain.state); `state_at` orders the states.
  `create table sending_domains (
    domain_id uuid primary key,
    team_id uuid not null,
    name text not null,
    status text not null,
    sending_verified boolean not null,
    dkim_selector text not null,
    dkim_private_key_encrypted text not null,
    return_path text not null,
    tls text not null,
    state_at timestamptz not null
  )`,
  `create index sending_domains_name_idx on sending_domains (name)`,
  `create table emails (
    id uuid primary key,
    team_id uuid not null,
    domain_id uuid not null,
    from_header text not null,
    from_address text not null,
    from_domain text not null,
    to_addresses text[] not null,
    cc_addresses text[] not null,
    bcc_addresses text[] not null,
    reply_to text[] not null,
    subject text not null,
    html text,
    text text,
    headers jsonb not null,
    tags jsonb not null,
    message_id text not null,
    status text not null check (status in ('scheduled', 'queued', 'canceled')),
    last_event text not null,
    scheduled_at timestamptz,
    created_at timestamptz not null default now()
  )`,
  `create index emails_team_idx on emails (team_id, id)`,
  `create table email_attachments (
    email_id uuid not null references emails (id) on delete cascade,
    position smallint not null,
    filename text,
    content_type text,
    content_id text,
    content bytea not null,
    primary key (email_id, position)
  )`,
  // One row per envelope recipient (to, cc and bcc); `attempts` counts delivery attempts made.
  `create table recipients (
    email_id uuid not null references emails (id) on delete cascade,
    position smallint not null,
    team_id uuid not null,
    address text not null,
    domain text not null,
    status text not null check (status in ('pending', 'deferred', 'delivered', 'bounced', 'failed', 'suppressed', 'complained', 'canceled')),
    attempts integer not null default 0,
    first_deferred_at timestamptz,
    last_code integer,
    last_response text,
    bounce_type text,
    updated_at timestamptz not null default now(),
    primary key (email_id, position)
  )`,
  `create index recipients_address_idx on recipients (team_id, address) where bounce_type = 'Transient'`,
  // The gateway's Idempotency-Key, forwarded: a repeat of an accepted request answers the stored response.
  `create table accepted_requests (
    team_id uuid not null,
    idempotency_key text not null,
    response jsonb not null,
    created_at timestamptz not null default now(),
    primary key (team_id, idempotency_key)
  )`,
  `create table suppressions (
    id uuid primary key,
    team_id uuid not null,
    email text not null,
    origin text not null check (origin in ('bounce', 'complaint', 'manual')),
    source_id text,
    expires_at timestamptz,
    created_at timestamptz not null default now()
  )`,
  `create unique index suppressions_email_key on suppressions (team_id, email)`,
  `create index suppressions_team_idx on suppressions (team_id, id)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}
