import type { ColumnType, Selectable } from 'kysely';
import type { DmarcPolicyPublished, DmarcRecord } from '../domain/dmarc-report-xml.ts';

/** Postgres returns bigint as a string; we write numbers. */
type BigintColumn = ColumnType<string, number, number>;

/** One DMARC aggregate report received for a team's domain. */
export type DmarcReportsTable = {
  id: string;
  team_id: string;
  domain_id: string;
  received_at: Date;
  /** `rfc9990` (the DMARC 2.0 namespace) or `rfc7489`. */
  format: string;
  org_name: string;
  org_email: string;
  /** The reporter's id of the report: with org_name and domain_id, unique. */
  report_id: string;
  begin_at: Date;
  end_at: Date;
  /** `policy_published/domain` as the report gives it (the domain itself, a subdomain or its parent). */
  policy_domain: string;
  policy: ColumnType<DmarcPolicyPublished, string, string>;
  errors: ColumnType<string[], string, string>;
  /** The sum of the kept records' counts. */
  message_count: BigintColumn;
  record_count: number;
};

/** One record of a report: a source IP, its message count, and its DMARC, DKIM and SPF results. */
export type DmarcReportRecordsTable = {
  report_id: string;
  position: number;
  source_ip: string;
  count: BigintColumn;
  disposition: string;
  /** policy_evaluated: DKIM and SPF aligned and passing, as DMARC counts them. */
  dkim_aligned: boolean;
  spf_aligned: boolean;
  reasons: ColumnType<DmarcRecord['reasons'], string, string>;
  header_from: string;
  envelope_from: string | null;
  envelope_to: string | null;
  dkim_results: ColumnType<DmarcRecord['dkim_results'], string, string>;
  spf_results: ColumnType<DmarcRecord['spf_results'], string, string>;
};

export type DmarcReportTables = { dmarc_reports: DmarcReportsTable; dmarc_report_records: DmarcReportRecordsTable };

export type DmarcReportRow = Selectable<DmarcReportsTable>;
