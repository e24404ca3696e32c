// A DMARC report message at the MX: its report files read (decompressed, parsed, checked, on a worker thread:
// domain/dmarc-report-reading.ts) before the MX's transaction opens, then each report stored for each domain
// it was addressed to, in that transaction, so that the 250 the MX answers after the commit means the
// reports are kept. A refused report (malformed,
// hostile, too large, about another domain) is dropped and counted without failing the message's others;
// a report message is never a received email of the team (no `email.received`).
import { newId, type Logger } from '@postline/platform';
import type { Transaction } from 'kysely';
import type { InboundDb } from '../db/schema.ts';
import { recordsFor } from '../domain/dmarc-report-address.ts';
import type { FileRefusal } from '../domain/dmarc-report-files.ts';
import type { ReadReport } from '../domain/dmarc-report-reading.ts';
import type { ReportRefusal } from '../domain/dmarc-report-xml.ts';
import { insertDmarcReport } from '../db/dmarc-reports.ts';

/** A RCPT at a domain's report address. */
export type DmarcRecipient = { teamId: string; domainId: string; domainName: string };

/**
 * What became of one report (or of a message without any): `stored`, `duplicate` (that organisation's
 * report of that id is already the domain's), or dropped: `foreign_domain` (about a domain other than the
 * address's), `malformed`, `doctype` (a DOCTYPE or ENTITY declaration: an XML bomb or an XXE attempt),
 * `too_large`, `too_many_records`, `too_many_files`, `no_report` (a message without a report file).
 */
export type DmarcOutcome = 'stored' | 'duplicate' | 'foreign_domain' | 'no_report' | ReportRefusal | FileRefusal;

/** Stores `reports` for each recipient's domain, in the MX's transaction; one outcome per report and domain. */
export async function recordDmarcReports(
  trx: Transaction<InboundDb>,
  input: { reports: ReadReport[]; recipients: DmarcRecipient[]; receivedAt: Date; remoteAddress: string },
  logger: Logger,
): Promise<DmarcOutcome[]> {
  const outcomes: DmarcOutcome[] = [];
  const drop = (outcome: DmarcOutcome, fields: Record<string, unknown>) => {
    outcomes.push(outcome);
    logger.info({ outcome, ip: input.remoteAddress, ...fields }, 'DMARC report dropped');
  };
  if (input.reports.length === 0) {
    for (const to of input.recipients) drop('no_report', { domain_id: to.domainId });
    return outcomes;
  }
  for (const read of input.reports) {
    if (!read.ok) {
      drop(read.reason, { file: read.file, detail: read.detail });
      continue;
    }
    const { report } = read;
    for (const to of input.recipients) {
      const records = recordsFor(report, to.domainName);
      if (records.length === 0) {
        drop('foreign_domain', { domain_id: to.domainId, policy_domain: report.policy.domain, org: report.org_name });
        continue;
      }
      const stored = await insertDmarcReport(
        trx,
        {
          id: newId(),
          team_id: to.teamId,
          domain_id: to.domainId,
          received_at: input.receivedAt,
          format: report.format,
          org_name: report.org_name,
          org_email: report.org_email,
          report_id: report.report_id,
          begin_at: report.begin,
          end_at: report.end,
          policy_domain: report.policy.domain,
          policy: report.policy,
          errors: report.errors,
          message_count: records.reduce((sum, r) => sum + r.count, 0),
          record_count: records.length,
        },
        records,
      );
      outcomes.push(stored ? 'stored' : 'duplicate');
    }
  }
  return outcomes;
}
