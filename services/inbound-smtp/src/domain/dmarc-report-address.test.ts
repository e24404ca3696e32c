import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { domainIdOfLocalPart, recordsFor, reportAddressOf, suggestedDmarcRecord } from './dmarc-report-address.ts';
import { parseAggregateReport, type DmarcAggregateReport } from './dmarc-report-xml.ts';

const ID = '0195f3a2-0000-7000-8000-00000000000a';

function report(name: string): DmarcAggregateReport {
  const parsed = parseAggregateReport(
    readFileSync(new URL(`../../test/fixtures/dmarc/${name}`, import.meta.url), 'utf8'),
    { maxRecords: 100 },
  );
  if (!parsed.ok) throw new Error(parsed.detail);
  return parsed.report;
}

describe('the report address', () => {
  it('names the domain by its id, and reads it back whatever the case', () => {
    const address = reportAddressOf(ID, 'inbound.postline.test');
    expect(address).toBe('dmarc+0195f3a200007000800000000000000a@inbound.postline.test');
    expect(domainIdOfLocalPart(address.split('@')[0]!.toUpperCase().replace('DMARC', 'dmarc'))).toBe(ID);
    expect(domainIdOfLocalPart('dmarc')).toBeUndefined();
    expect(domainIdOfLocalPart('dmarc+0195f3a2')).toBeUndefined();
    expect(domainIdOfLocalPart('postmaster')).toBeUndefined();
    expect(suggestedDmarcRecord('example.com', ID, 'mx.test')).toEqual({
      name: '_dmarc.example.com',
      type: 'TXT',
      value: 'v=DMARC1; p=none; rua=mailto:dmarc+0195f3a200007000800000000000000a@mx.test;',
    });
  });
});

describe('recordsFor', () => {
  it('keeps every record of a report about the domain or one of its subdomains', () => {
    expect(recordsFor(report('google.xml'), 'dmarc-test.example.com')).toHaveLength(2);
  });
  it("keeps only the domain's own records of a report about its parent", () => {
    const yahoo = report('yahoo.xml');
    expect(recordsFor(yahoo, 'news.dmarc-test.example.com')).toHaveLength(1);
    expect(recordsFor(report('google.xml'), 'news.dmarc-test.example.com')).toEqual([]);
  });
  it('keeps nothing of a report about another domain', () => {
    expect(recordsFor(report('foreign-domain.xml'), 'dmarc-test.example.com')).toEqual([]);
    expect(recordsFor(report('google.xml'), 'test.example.com')).toEqual([]);
  });
});
