import { sql, type Kysely } from 'kysely';

// Frozen: never edit an applied migration; add a new one.
const STATEMENTS = [
  `create table domains (
    id uuid primary key,
    team_id uuid not null,
    name text not null,
    zone text not null,
    region text not null,
    status text not null,
    custom_return_path text not null,
    open_tracking boolean not null default false,
    click_tracking boolean not null default false,
    tracking_subdomain text,
    tls text not null check (tls in ('opportunistic', 'enforced')),
    sending boolean not null,
    receiving boolean not null,
    sending_verified boolean not null default false,
    receiving_verified boolean not null default false,
    dkim_selector text not null,
    dkim_public_key text not null,
    dkim_private_key_encrypted text not null,
    window_started_at timestamptz not null,
    checks_in_window integer not null default 0,
    last_checked_at timestamptz,
    next_check_at timestamptz,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`,
  // A name belongs to one team: inbound mail for it must route to exactly one place.
  `create unique index domains_name_key on domains (name)`,
  `create index domains_team_idx on domains (team_id, id)`,
  `create table domain_records (
    domain_id uuid not null references domains (id) on delete cascade,
    kind text not null check (kind in ('dkim', 'spf_mx', 'spf_txt', 'receiving_mx')),
    status text not null,
    detail text,
    checked_at timestamptz,
    primary key (domain_id, kind)
  )`,
  `create table domain_checks (
    id uuid primary key,
    domain_id uuid not null references domains (id) on delete cascade,
    trigger text not null check (trigger in ('scheduled', 'manual')),
    status text not null,
    findings jsonb not null,
    checked_at timestamptz not null default now()
  )`,
  `create index domain_checks_domain_idx on domain_checks (domain_id, checked_at desc)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}
