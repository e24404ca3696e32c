import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { gzipSync, zipSync } from 'fflate';
import type { ParsedAttachment } from './received-message.ts';
import { reportFilesOf } from './dmarc-report-files.ts';

const xml = readFileSync(new URL('../../test/fixtures/dmarc/google.xml', import.meta.url));
const LIMITS = { maxReportBytes: 1024 * 1024, maxFiles: 5, maxTotalBytes: 2 * 1024 * 1024 };

function attachment(content: Uint8Array, contentType: string, filename: string | null = null): ParsedAttachment {
  return { filename, contentType, contentDisposition: 'attachment', contentId: null, content: Buffer.from(content) };
}

describe('reportFilesOf', () => {
  it('reads plain XML, gzip and every XML file of a zip, whatever their Content-Type says', () => {
    const files = reportFilesOf(
      [
        attachment(xml, 'text/xml', 'a.xml'),
        attachment(gzipSync(xml), 'application/octet-stream', 'b.xml.gz'),
        attachment(
          zipSync({ 'c.xml': xml, 'd.xml': xml, 'dir/': new Uint8Array() }),
          'application/x-zip-compressed',
          'cd.zip',
        ),
      ],
      LIMITS,
    );
    expect(files.map((f) => [f.name, f.ok && f.xml === xml.toString()])).toEqual([
      ['a.xml', true],
      ['b.xml', true],
      ['c.xml', true],
      ['d.xml', true],
    ]);
  });

  it('stops inflating a gzip or zip bomb at the cap, whatever size its headers declare', () => {
    const zeros = new Uint8Array(8 * 1024 * 1024);
    const files = reportFilesOf(
      [
        attachment(gzipSync(zeros, { level: 9 }), 'application/gzip', 'bomb.xml.gz'),
        attachment(zipSync({ 'bomb.xml': zeros }, { level: 9 }), 'application/zip', 'bomb.zip'),
        attachment(gzipSync(xml), 'application/gzip', 'fine.xml.gz'),
      ],
      LIMITS,
    );
    expect(files.map((f) => (f.ok ? 'ok' : f.reason))).toEqual(['too_large', 'too_large', 'ok']);
  });

  it('calls a truncated or corrupt archive malformed and skips parts that are no report', () => {
    const gz = gzipSync(xml);
    const files = reportFilesOf(
      [
        attachment(gz.subarray(0, gz.length - 40), 'application/gzip', 'cut.xml.gz'),
        attachment(Buffer.from('PK\u0003\u0004garbage'), 'application/zip', 'bad.zip'),
        attachment(Buffer.from('just words'), 'application/gzip', 'liar.xml.gz'),
        attachment(Buffer.from('%PDF-1.4'), 'application/pdf', 'invoice.pdf'),
      ],
      LIMITS,
    );
    expect(files.map((f) => [f.name, f.ok ? 'ok' : f.reason])).toEqual([
      ['cut.xml', 'malformed'],
      ['bad.zip', 'malformed'],
      ['liar.xml.gz', 'malformed'],
    ]);
  });

  it('reads at most maxFiles report files from one message', () => {
    const many = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`r${i}.xml`, xml]));
    const files = reportFilesOf([attachment(zipSync(many), 'application/zip', 'many.zip')], LIMITS);
    expect(files.filter((f) => f.ok)).toHaveLength(5);
    expect(files.filter((f) => !f.ok && f.reason === 'too_many_files')).toHaveLength(2);
  });

  it('refuses a plain XML file past the cap, and files past the total of one message', () => {
    const big = Buffer.concat([xml, Buffer.alloc(1024 * 1024, ' ')]);
    const third = Buffer.concat([xml, Buffer.alloc(700 * 1024, ' ')]);
    const files = reportFilesOf(
      [
        attachment(big, 'text/xml', 'huge.xml'),
        attachment(gzipSync(third), 'application/gzip', 'a.xml.gz'),
        attachment(gzipSync(third), 'application/gzip', 'b.xml.gz'),
        attachment(gzipSync(third), 'application/gzip', 'c.xml.gz'),
      ],
      LIMITS,
    );
    expect(files.map((f) => [f.name, f.ok ? 'ok' : f.reason])).toEqual([
      ['huge.xml', 'too_large'],
      ['a.xml', 'ok'],
      ['b.xml', 'ok'],
      ['c.xml', 'too_large'],
    ]);
  });
});
