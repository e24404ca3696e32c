// The DMARC aggregate reports' queries: storing a report once, and the figures of a domain's period.
import { sql, type Kysely, type Transaction } from 'kysely';
import { PREPARED } from '@postline/platform';
import type { InboundDb } from './schema.ts';
import type { DmarcReportRow, DmarcReportsTable } from './dmarc-report-tables.ts';
import type { DmarcRecord } from '../domain/dmarc-report-xml.ts';

type Db = Kysely<InboundDb> | Transaction<InboundDb>;

export type NewDmarcReport = Omit<DmarcReportsTable, 'policy' | 'errors' | 'message_count'> & {
  policy: object;
  errors: string[];
  message_count: number;
};

/**
 * Stores a report and its records unless the domain already has that organisation's report of that id:
 * true when stored, false for a duplicate (nothing written).
 */
export async function insertDmarcReport(trx: Db, report: NewDmarcReport, records: DmarcRecord[]): Promise<boolean> {
  const rows = records.map((r, position) => ({
    report_id: report.id,
    position,
    source_ip: r.source_ip,
    count: r.count,
    disposition: r.disposition,
    dkim_aligned: r.dkim === 'pass',
    spf_aligned: r.spf === 'pass',
    reasons: r.reasons,
    header_from: r.header_from,
    envelope_from: r.envelope_from,
    envelope_to: r.envelope_to,
    dkim_results: r.dkim_results,
    spf_results: r.spf_results,
  }));
  const { rows: inserted } = await sql<{ id: string }>`with report as (
      insert into dmarc_reports (id, team_id, domain_id, received_at, format, org_name, org_email, report_id, begin_at,
        end_at, policy_domain, policy, errors, message_count, record_count)
      values (${report.id}, ${report.team_id}, ${report.domain_id}, ${report.received_at}, ${report.format},
        ${report.org_name}, ${report.org_email}, ${report.report_id}, ${report.begin_at}, ${report.end_at},
        ${report.policy_domain}, ${JSON.stringify(report.policy)}::jsonb, ${JSON.stringify(report.errors)}::jsonb,
        ${report.message_count}, ${report.record_count})
      on conflict (domain_id, org_name, report_id) do nothing
      returning id
    ), records as (
      insert into dmarc_report_records
      select r.* from jsonb_populate_recordset(null::dmarc_report_records, ${JSON.stringify(rows)}::jsonb) r
      where exists (select 1 from report)
    )
    select ${PREPARED} id from report`.execute(trx);
  return inserted.length > 0;
}

/** A domain's reports whose period begins in [from, to). */
export type DmarcPeriod = { teamId: string; domainId: string; from: Date; to: Date };

/** Message counts by DMARC outcome. */
export type DmarcCounts = {
  messages: number;
  dmarc_pass: number;
  dmarc_fail: number;
  spf_aligned: number;
  dkim_aligned: number;
};

const COUNTS = sql`coalesce(sum(c.count), 0)::float8 as messages,
  coalesce(sum(c.count) filter (where c.dkim_aligned or c.spf_aligned), 0)::float8 as dmarc_pass,
  coalesce(sum(c.count) filter (where not (c.dkim_aligned or c.spf_aligned)), 0)::float8 as dmarc_fail,
  coalesce(sum(c.count) filter (where c.spf_aligned), 0)::float8 as spf_aligned,
  coalesce(sum(c.count) filter (where c.dkim_aligned), 0)::float8 as dkim_aligned`;

function inPeriod(p: DmarcPeriod) {
  return sql`r.team_id = ${p.teamId} and r.domain_id = ${p.domainId} and r.begin_at >= ${p.from} and r.begin_at < ${p.to}`;
}

export async function dmarcTotals(db: Db, p: DmarcPeriod): Promise<DmarcCounts & { reports: number }> {
  const { rows } = await sql<DmarcCounts & { reports: number }>`select ${PREPARED}
      (select count(*)::int from dmarc_reports r where ${inPeriod(p)}) as reports, ${COUNTS}
    from dmarc_reports r join dmarc_report_records c on c.report_id = r.id where ${inPeriod(p)}`.execute(db);
  return rows[0]!;
}

/** Per UTC day of the reports' begin. */
export async function dmarcByDay(db: Db, p: DmarcPeriod): Promise<(DmarcCounts & { date: string })[]> {
  const { rows } = await sql<DmarcCounts & { date: string }>`select ${PREPARED}
      to_char(date_trunc('day', r.begin_at at time zone 'UTC'), 'YYYY-MM-DD') as date, ${COUNTS}
    from dmarc_reports r join dmarc_report_records c on c.report_id = r.id where ${inPeriod(p)}
    group by 1 order by 1`.execute(db);
  return rows;
}

/** The sources with most messages first (at most `limit`), with the From domains they sent as. */
export async function dmarcBySource(
  db: Db,
  p: DmarcPeriod,
  limit: number,
): Promise<(DmarcCounts & { source_ip: string; header_from: string[]; org_names: string[] })[]> {
  const { rows } = await sql<DmarcCounts & { source_ip: string; header_from: string[]; org_names: string[] }>`
    select ${PREPARED} c.source_ip, ${COUNTS},
      (array_agg(distinct c.header_from order by c.header_from))[1:10] as header_from,
      (array_agg(distinct r.org_name order by r.org_name))[1:10] as org_names
    from dmarc_reports r join dmarc_report_records c on c.report_id = r.id where ${inPeriod(p)}
    group by c.source_ip order by messages desc, c.source_ip limit ${limit}`.execute(db);
  return rows;
}

export async function dmarcByOrganization(
  db: Db,
  p: DmarcPeriod,
  limit: number,
): Promise<(DmarcCounts & { org_name: string; reports: number })[]> {
  const { rows } = await sql<DmarcCounts & { org_name: string; reports: number }>`
    select ${PREPARED} r.org_name, count(distinct r.id)::int as reports, ${COUNTS}
    from dmarc_reports r join dmarc_report_records c on c.report_id = r.id where ${inPeriod(p)}
    group by r.org_name order by messages desc, r.org_name limit ${limit}`.execute(db);
  return rows;
}

/** The period's reports, the latest first (at most `limit`), each with its pass and fail counts. */
export async function dmarcReportList(
  db: Db,
  p: DmarcPeriod,
  limit: number,
): Promise<(DmarcReportRow & { dmarc_pass: number; dmarc_fail: number })[]> {
  const { rows } = await sql<DmarcReportRow & { dmarc_pass: number; dmarc_fail: number }>`
    select ${PREPARED} r.*,
      coalesce(sum(c.count) filter (where c.dkim_aligned or c.spf_aligned), 0)::float8 as dmarc_pass,
      coalesce(sum(c.count) filter (where not (c.dkim_aligned or c.spf_aligned)), 0)::float8 as dmarc_fail
    from dmarc_reports r join dmarc_report_records c on c.report_id = r.id where ${inPeriod(p)}
    group by r.id order by r.begin_at desc, r.id desc limit ${limit}`.execute(db);
  return rows;
}

/** A deleted domain's reports go with it (its records by the foreign key's cascade). */
export async function deleteDmarcReportsOfDomain(trx: Db, domainId: string): Promise<void> {
  await trx.deleteFrom('dmarc_reports').where('domain_id', '=', domainId).execute();
}
