import { sql, type Kysely } from 'kysely';

// Frozen: never edit an applied migration; add a new one.
//
// DMARC aggregate reports received for the teams' domains (at `dmarc+<domain id>@<INBOUND_MX_HOST>`): one row
// per report, unique by (domain, reporting organisation, report id) so that a report sent again (a
// reporter's retry, the same report to two of our addresses) is counted once; and one row per record of
// the report (a source IP and its results). The raw message is not kept.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table dmarc_reports (
    id uuid primary key,
    team_id uuid not null,
    domain_id uuid not null,
    received_at timestamptz not null,
    format text not null,
    org_name text not null,
    org_email text not null,
    report_id text not null,
    begin_at timestamptz not null,
    end_at timestamptz not null,
    policy_domain text not null,
    policy jsonb not null,
    errors jsonb not null,
    message_count bigint not null,
    record_count integer not null
  )`.execute(db);
  await sql`create unique index dmarc_reports_report on dmarc_reports (domain_id, org_name, report_id)`.execute(db);
  await sql`create index dmarc_reports_period on dmarc_reports (team_id, domain_id, begin_at)`.execute(db);
  await sql`create table dmarc_report_records (
    report_id uuid not null references dmarc_reports (id) on delete cascade,
    position integer not null,
    source_ip text not null,
    count bigint not null,
    disposition text not null,
    dkim_aligned boolean not null,
    spf_aligned boolean not null,
    reasons jsonb not null,
    header_from text not null,
    envelope_from text,
    envelope_to text,
    dkim_results jsonb not null,
    spf_results jsonb not null,
    primary key (report_id, position)
  )`.execute(db);
}
