import { sql, type Kysely } from 'kysely';

// Frozen: never edit an applied migration; add a new one.
// Domain claims: a team proves with a DNS TXT record that it controls a domain another team registered,
// and takes it over. `domain_id` is the id the domain gets under the claiming team once the claim
// completes; the settings are those the domain is created with then.
const STATEMENTS = [
  `create table domain_claims (
    id uuid primary key,
    team_id uuid not null,
    domain_id uuid not null,
    name text not null,
    zone text not null,
    region text not null,
    custom_return_path text not null,
    open_tracking boolean not null,
    click_tracking boolean not null,
    tracking_subdomain text,
    token text not null,
    status text not null check (status in ('pending', 'verified', 'completed', 'blocked', 'expired', 'superseded', 'canceled', 'failed')),
    failure_reason text,
    created_at timestamptz not null,
    expires_at timestamptz not null,
    updated_at timestamptz not null
  )`,
  `create index domain_claims_domain_idx on domain_claims (team_id, domain_id, created_at desc)`,
  `create index domain_claims_name_idx on domain_claims (name) where status = 'pending'`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}
