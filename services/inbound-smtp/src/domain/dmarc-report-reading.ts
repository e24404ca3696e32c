// A DMARC report message's files read into reports: each attachment decompressed (dmarc-report-files) and its
// XML parsed and checked (dmarc-report-xml), within the limits. Pure and CPU-bound (a report of 20,000
// records takes seconds): the MX runs it on a worker thread (message-parsing/dmarc-report-reader.ts).
import { reportFilesOf, type FileRefusal, type ReportFileLimits } from './dmarc-report-files.ts';
import { parseAggregateReport, type DmarcAggregateReport, type ReportRefusal } from './dmarc-report-xml.ts';
import type { ParsedAttachment } from './received-message.ts';

export type DmarcLimits = ReportFileLimits & { maxRecords: number };

export const DEFAULT_DMARC_LIMITS: DmarcLimits = {
  maxReportBytes: 20 * 1024 * 1024,
  maxFiles: 50,
  maxTotalBytes: 50 * 1024 * 1024,
  // Google's reports for a large sender run to a few thousand records a day.
  maxRecords: 20_000,
};

/** A report file as read: the report, or why it is dropped. */
export type ReadReport = { file: string } & (
  | { ok: true; report: DmarcAggregateReport }
  | { ok: false; reason: ReportRefusal | FileRefusal; detail: string }
);

/** The reports of a message's attachments, each read or refused. */
export function readDmarcReports(attachments: readonly ParsedAttachment[], limits: DmarcLimits): ReadReport[] {
  return reportFilesOf(attachments, limits).map((file): ReadReport => {
    if (!file.ok) return { file: file.name, ok: false, reason: file.reason, detail: file.detail };
    const parsed = parseAggregateReport(file.xml, limits);
    return parsed.ok
      ? { file: file.name, ok: true, report: parsed.report }
      : { file: file.name, ok: false, reason: parsed.reason, detail: parsed.detail };
  });
}
