import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import {
  decodeWords,
  findReport,
  firstText,
  headerValue,
  parseContentType,
  parseHeaderBlock,
  parseMime,
  partText,
  walkParts,
} from './multipart-report.ts';

const fixture = (name: string) => readFileSync(new URL(`../../test/fixtures/${name}`, import.meta.url));
/** The same bytes with CRLF line ends, as the MX stores them. */
const crlf = (raw: Buffer) => Buffer.from(raw.toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1');

describe('parseMime', () => {
  it.each([
    ['LF', (raw: Buffer) => raw],
    ['CRLF', crlf],
  ])('walks a Gmail DSN (%s): nested multiparts, quoted-printable, the original message', (_name, lineEnds) => {
    const root = parseMime(lineEnds(fixture('gmail-failed.eml')));
    expect(root.contentType).toBe('multipart/report');
    expect(root.params).toMatchObject({ 'report-type': 'delivery-status', boundary: '000000000000f1e2d3c4b5a69788' });
    expect(walkParts(root).map((part) => part.contentType)).toEqual([
      'multipart/report',
      'multipart/related',
      'multipart/alternative',
      'text/plain',
      'text/html',
      'message/delivery-status',
      'message/rfc822',
    ]);
    const text = firstText(root);
    expect(text).toContain(
      "Your message wasn't delivered to nosuchuser.2026@gmail.com because the address couldn't be found",
    );
    expect(text).toContain('https://support.google.com/mail/?p=NoSuchUser');
    const original = root.parts[2]?.parts[0];
    expect(headerValue(original?.headers ?? [], 'return-path')).toBe(
      '<b.0190a6f48b4a700080000000000000a1.0.r34l57ry44@send.acme.test>',
    );
    expect(partText(original!)).toBe('Thanks for your order.\n'.replace('\n', lineEnds === crlf ? '\r\n' : '\n'));
  });

  it('decodes a base64 part', () => {
    const root = parseMime(fixture('outlook-failed.eml'));
    expect(firstText(root)).toContain("Your message to erin@contoso.com couldn't be delivered.");
  });

  it('splits parts of a multipart whose closing boundary is missing, and one whose boundary never comes', () => {
    const malformed = parseMime(fixture('malformed-dsn.eml'));
    expect(malformed.parts.map((part) => part.contentType)).toEqual([
      'text/plain',
      'message/delivery-status',
      'text/rfc822-headers',
    ]);
    const truncated = parseMime(fixture('truncated-report.eml'));
    expect(truncated.parts).toEqual([]);
    expect(findReport(truncated)).toBeUndefined();
  });

  it('bounds nesting and the number of parts', () => {
    let message = 'Content-Type: text/plain\r\n\r\ninnermost';
    for (let i = 0; i < 50; i++)
      message = `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n--b${i}\r\n${message}\r\n--b${i}--\r\n`;
    const deep = parseMime(Buffer.from(message));
    expect(walkParts(deep).length).toBeLessThanOrEqual(9);

    const many = Array.from({ length: 500 }, (_, i) => `--w\r\nContent-Type: text/plain\r\n\r\npart ${i}`).join('\r\n');
    const wide = parseMime(Buffer.from(`Content-Type: multipart/mixed; boundary=w\r\n\r\n${many}\r\n--w--\r\n`));
    expect(walkParts(wide).length).toBeLessThanOrEqual(100);
  });

  it('reads a message without headers, or without a body, and binary garbage, without throwing', () => {
    expect(parseMime(Buffer.from('\r\njust a body')).contentType).toBe('text/plain');
    expect(parseMime(Buffer.from('Subject: only headers')).headers).toEqual([
      { name: 'subject', value: 'only headers' },
    ]);
    const garbage = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256));
    expect(() => findReport(parseMime(garbage))).not.toThrow();
  });

  it('drops NUL characters, which Postgres text and jsonb refuse, from header values and texts', () => {
    const root = parseMime(
      Buffer.from(
        'Subject: a\u0000b\r\nContent-Transfer-Encoding: base64\r\n\r\n' +
          Buffer.from('550\u0000 gone').toString('base64'),
        'latin1',
      ),
    );
    expect(headerValue(root.headers, 'subject')).toBe('ab');
    expect(firstText(root)).toBe('550 gone');
  });

  it('reads UTF-8 header values (RFC 6532)', () => {
    const root = parseMime(Buffer.from('Subject: Zurück an den Absender\r\n\r\nbody', 'utf8'));
    expect(headerValue(root.headers, 'subject')).toBe('Zurück an den Absender');
  });
});

describe('findReport', () => {
  it('finds the status part and the original inside a multipart/mixed wrapper', () => {
    const raw = [
      'Content-Type: multipart/mixed; boundary=outer',
      '',
      '--outer',
      'Content-Type: text/plain',
      '',
      'A gateway wrapped the report.',
      '--outer',
      'Content-Type: multipart/report; report-type=delivery-status; boundary=inner',
      '',
      '--inner',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; gw.example.com',
      '',
      'Final-Recipient: rfc822; a@example.com',
      'Action: failed',
      'Status: 5.1.1',
      '--inner',
      'Content-Type: text/rfc822-headers',
      '',
      'Return-Path: <x@send.acme.test>',
      'To: a@example.com',
      '--inner--',
      '--outer--',
    ].join('\r\n');
    const report = findReport(parseMime(Buffer.from(raw)));
    expect(report?.kind).toBe('delivery-status');
    expect(report?.fields).toContain('Final-Recipient: rfc822; a@example.com');
    expect(report?.original).toEqual([
      { name: 'return-path', value: '<x@send.acme.test>' },
      { name: 'to', value: 'a@example.com' },
    ]);
  });

  it('reads a feedback report and its message/rfc822 original', () => {
    const report = findReport(parseMime(fixture('yahoo-arf.eml')));
    expect(report?.kind).toBe('feedback-report');
    expect(report?.fields).toMatch(/^Feedback-Type: abuse/);
    expect(headerValue(report?.original ?? [], 'to')).toBe('redacted@yahoo.com');
  });

  it('reads message/global-delivery-status (RFC 6533) as a DSN', () => {
    const raw =
      'Content-Type: multipart/report; report-type=global-delivery-status; boundary=g\r\n\r\n--g\r\nContent-Type: message/global-delivery-status\r\n\r\nFinal-Recipient: utf-8; jörg@example.de\r\nAction: failed\r\nStatus: 5.1.1\r\n--g--\r\n';
    const report = findReport(parseMime(Buffer.from(raw, 'utf8')));
    expect(report).toMatchObject({ kind: 'delivery-status' });
    expect(report?.fields).toContain('jörg@example.de');
  });
});

describe('header helpers', () => {
  it('unfolds continuation lines and skips lines that are not fields', () => {
    expect(
      parseHeaderBlock(
        'Diagnostic-Code: smtp; 550 5.1.1 <a@b>: Recipient\r\n    address rejected\r\nnot a field\r\nStatus: 5.1.1',
      ),
    ).toEqual([
      { name: 'diagnostic-code', value: 'smtp; 550 5.1.1 <a@b>: Recipient address rejected' },
      { name: 'status', value: '5.1.1' },
    ]);
  });

  it('parses Content-Type parameters, quoted or not, and falls back to text/plain', () => {
    expect(parseContentType('multipart/report; report-type=delivery-status;\tboundary="a;b=\\"c"')).toEqual({
      type: 'multipart/report',
      params: { 'report-type': 'delivery-status', boundary: 'a;b="c' },
    });
    expect(parseContentType(undefined).type).toBe('text/plain');
    expect(parseContentType('garbage').type).toBe('text/plain');
  });

  it('decodes RFC 2047 encoded words, joining adjacent ones', () => {
    expect(decodeWords('=?UTF-8?Q?unsubscribe_abc?= =?UTF-8?Q?.def?=')).toBe('unsubscribe abc.def');
    expect(decodeWords('=?iso-8859-1?B?WnVy/GNr?= an Absender')).toBe('Zurück an Absender');
    expect(decodeWords('plain text')).toBe('plain text');
    expect(decodeWords('=?x-unknown-charset?Q?abc?=')).toBe('abc');
  });
});
