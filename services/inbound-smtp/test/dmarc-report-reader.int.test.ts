// The DMARC report reader on its worker thread: no thread until a report comes, the same reports and refusals
// as reading on this thread (samples from five reporters; an XML bomb, a gzip bomb, broken XML), dates
// still dates, and the thread stopped once no report has come for a while.
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from '@jest/globals';
import { gzipSync, zipSync } from 'fflate';
import { waitFor } from '@postline/testing';
import { DEFAULT_DMARC_LIMITS, readDmarcReports } from '../src/domain/dmarc-report-reading.ts';
import type { ParsedAttachment } from '../src/domain/received-message.ts';
import { createDmarcReportReader } from '../src/message-parsing/dmarc-report-reader.ts';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/dmarc/${name}`, import.meta.url));
const attachment = (filename: string, contentType: string, content: Uint8Array): ParsedAttachment => ({
  filename,
  contentType,
  contentDisposition: 'attachment',
  contentId: null,
  content: Buffer.from(content),
});

const reader = createDmarcReportReader({ limits: DEFAULT_DMARC_LIMITS, idleMs: 100 });
afterAll(() => reader.close());

describe('the DMARC report reader', () => {
  it('reads reports on a thread started for them, as this thread would, and stops the thread once idle', async () => {
    expect(reader.workers()).toHaveLength(0);
    const attachments = [
      attachment('google.zip', 'application/zip', zipSync({ 'google.xml': fixture('google.xml') })),
      attachment('microsoft.xml.gz', 'application/gzip', gzipSync(fixture('microsoft.xml'))),
      attachment('yahoo.xml.gz', 'application/octet-stream', gzipSync(fixture('yahoo.xml'))),
      attachment('fastmail.xml', 'text/xml', fixture('fastmail-rfc9990.xml')),
      attachment('laughs.xml', 'text/xml', fixture('billion-laughs.xml')),
      // 64 MiB of zeros once inflated: stopped at the 20 MiB cap.
      attachment('bomb.xml.gz', 'application/gzip', gzipSync(new Uint8Array(64 * 1024 * 1024), { level: 9 })),
      attachment('broken.xml', 'application/xml', fixture('malformed.xml')),
    ];
    const read = await reader.read(attachments);
    expect(reader.workers()).toHaveLength(1);
    expect(read).toEqual(readDmarcReports(attachments, DEFAULT_DMARC_LIMITS));
    expect(read.map((r) => (r.ok ? 'ok' : r.reason))).toEqual([
      'ok',
      'ok',
      'ok',
      'ok',
      'doctype',
      'too_large',
      'malformed',
    ]);
    const google = read[0]!;
    expect(google.ok && google.report.begin).toEqual(new Date('2026-11-27T00:00:00Z'));

    await waitFor('the idle thread stopped', () => reader.workers().length === 0);
    // The next report starts one again.
    const again = await reader.read([attachment('mailru.xml', 'text/xml', fixture('mailru.xml'))]);
    expect(again).toMatchObject([{ file: 'mailru.xml', ok: true, report: { org_name: 'Mail.Ru' } }]);
  });
});
