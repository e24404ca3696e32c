import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { parseAggregateReport } from './dmarc-report-xml.ts';

const fixture = (name: string) => readFileSync(new URL(`../../test/fixtures/dmarc/${name}`, import.meta.url), 'utf8');
const LIMITS = { maxRecords: 1000 };

describe('parseAggregateReport', () => {
  it("reads Google's RFC 7489 report: metadata, the published policy and each record", () => {
    const parsed = parseAggregateReport(fixture('google.xml'), LIMITS);
    if (!parsed.ok) throw new Error(parsed.detail);
    const { report } = parsed;
    expect(report).toMatchObject({
      format: 'rfc7489',
      org_name: 'google.com',
      org_email: 'noreply-dmarc-support@google.com',
      report_id: '13254790917653492281',
      begin: new Date('2026-11-27T00:00:00Z'),
      end: new Date('2026-11-27T23:59:59Z'),
      policy: { domain: 'dmarc-test.example.com', p: 'none', sp: 'none', pct: 100, adkim: 'r', testing: null },
    });
    expect(report.records).toEqual([
      {
        source_ip: '203.0.113.10',
        count: 120,
        disposition: 'none',
        dkim: 'pass',
        spf: 'pass',
        reasons: [],
        header_from: 'dmarc-test.example.com',
        envelope_from: null,
        envelope_to: null,
        dkim_results: [{ domain: 'dmarc-test.example.com', selector: 'postline', result: 'pass' }],
        spf_results: [{ domain: 'send.dmarc-test.example.com', scope: null, result: 'pass' }],
      },
      expect.objectContaining({ source_ip: '198.51.100.77', count: 3, dkim: 'fail', spf: 'fail', dkim_results: [] }),
    ]);
  });

  it("reads Microsoft's report (xsi and xsd namespaces, <version>, an IPv6 source, a policy override reason)", () => {
    const parsed = parseAggregateReport(fixture('microsoft.xml'), LIMITS);
    if (!parsed.ok) throw new Error(parsed.detail);
    expect(parsed.report.org_name).toBe('Enterprise Outlook');
    expect(parsed.report.records[1]).toMatchObject({
      source_ip: '2001:db8::25',
      reasons: [{ type: 'local_policy', comment: 'arc=fail' }],
      envelope_to: 'contoso.com',
      spf_results: [{ domain: 'dmarc-test.example.com', scope: 'mfrom', result: 'fail' }],
    });
  });

  it("reads RFC 9990's format: the DMARC 2.0 namespace, discovery_method, np and testing", () => {
    const parsed = parseAggregateReport(fixture('fastmail-rfc9990.xml'), LIMITS);
    if (!parsed.ok) throw new Error(parsed.detail);
    expect(parsed.report.format).toBe('rfc9990');
    expect(parsed.report.policy).toMatchObject({ discovery_method: 'treewalk', np: 'reject', testing: 'n', pct: null });
    expect(parsed.report.records[0]).toMatchObject({ envelope_from: 'bulk-sender.example.org', count: 5 });
  });

  it('also reads a prefixed root in the DMARC 2.0 namespace', () => {
    const xml = fixture('fastmail-rfc9990.xml')
      .replace('<feedback xmlns=', '<d:feedback xmlns:d=')
      .replace('</feedback>', '</d:feedback>');
    const parsed = parseAggregateReport(xml, LIMITS);
    expect(parsed.ok && parsed.report.format).toBe('rfc9990');
  });

  it('refuses a DOCTYPE (billion laughs) before parsing, without expanding anything', () => {
    expect(parseAggregateReport(fixture('billion-laughs.xml'), LIMITS)).toMatchObject({ ok: false, reason: 'doctype' });
  });

  it('refuses malformed XML and a report missing what it must have', () => {
    expect(parseAggregateReport(fixture('malformed.xml'), LIMITS)).toMatchObject({ ok: false, reason: 'malformed' });
    const noRecord = fixture('yahoo.xml').replace(/<record>[\s\S]*<\/record>/, '');
    expect(parseAggregateReport(noRecord, LIMITS)).toMatchObject({
      ok: false,
      reason: 'malformed',
      detail: 'no record',
    });
    const badIp = fixture('yahoo.xml').replace('203.0.113.11', 'not-an-ip');
    expect(parseAggregateReport(badIp, LIMITS)).toMatchObject({ ok: false, reason: 'malformed' });
    const badCount = fixture('yahoo.xml').replace('<count>25</count>', '<count>-1</count>');
    expect(parseAggregateReport(badCount, LIMITS)).toMatchObject({ ok: false, reason: 'malformed' });
    const future = Math.floor(Date.now() / 1000) + 3 * 86_400;
    const fromTheFuture = fixture('yahoo.xml').replace(/<end>\d+<\/end>/, `<end>${future}</end>`);
    expect(parseAggregateReport(fromTheFuture, LIMITS)).toMatchObject({
      ok: false,
      reason: 'malformed',
      detail: 'date_range ends in the future',
    });
    expect(parseAggregateReport('<html><body>hi</body></html>', LIMITS)).toMatchObject({
      ok: false,
      reason: 'malformed',
    });
  });

  it('refuses a report with more records than the cap', () => {
    const record = /<record>[\s\S]*?<\/record>/.exec(fixture('yahoo.xml'))![0];
    const many = fixture('yahoo.xml').replace(record, record.repeat(4));
    expect(parseAggregateReport(many, { maxRecords: 3 })).toMatchObject({ ok: false, reason: 'too_many_records' });
    expect(parseAggregateReport(many, { maxRecords: 4 }).ok).toBe(true);
  });

  it('decodes the predefined entities once, never recursively', () => {
    const xml = fixture('yahoo.xml').replace(
      '<org_name>Yahoo</org_name>',
      '<org_name>AT&amp;T &amp;lt;x&#62;</org_name>',
    );
    const parsed = parseAggregateReport(xml, LIMITS);
    expect(parsed.ok && parsed.report.org_name).toBe('AT&T &lt;x>');
  });
});
