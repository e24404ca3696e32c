// What of the inbound-smtp's tables ages out with the team's retention (docs/retention.md lists every table
// and its rule).
import type { RetainedTable } from '@postline/platform';

/**
 * The fewest days a DMARC report is kept, whatever its team's retention: the dashboard's longest period (90
 * days) then always shows whole. Reports grow with days and reporting organisations, not with mail sent.
 */
export const DMARC_REPORT_MIN_DAYS = 90;

export const INBOUND_RETAINED_TABLES: readonly RetainedTable[] = [
  // A received email with its attachments; its raw message once no email of the same SMTP transaction (one
  // per recipient domain's team) refers to it.
  {
    table: 'received_emails',
    time: 'created_at',
    children: [{ table: 'received_attachments', column: 'email_id' }],
    orphans: { table: 'received_raw_messages', key: 'id', column: 'raw_id' },
  },
  // The record of a bounce or complaint received at a return-path address.
  { table: 'return_path_mail', time: 'received_at' },
  // A DMARC aggregate report with its records, by the end of the period it covers, kept at least
  // DMARC_REPORT_MIN_DAYS: a report's worth is the trend, and the dashboard shows up to the last 90 days. A
  // report holds up to 20,000 records, so five reports a statement bound it to 100,000 rows.
  {
    table: 'dmarc_reports',
    time: 'end_at',
    minDays: DMARC_REPORT_MIN_DAYS,
    batch: 5,
    children: [{ table: 'dmarc_report_records', column: 'report_id' }],
  },
];
