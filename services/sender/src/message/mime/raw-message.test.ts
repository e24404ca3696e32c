import { describe, expect, it } from '@jest/globals';
import { preparedRawMessage, splitRawMessage } from './raw-message.ts';

const crlf = (lines: string[]) => Buffer.from(lines.join('\r\n'), 'utf8');

describe('splitRawMessage', () => {
  it('splits header fields (folded lines kept with their field) from the body', () => {
    const parts = splitRawMessage(
      crlf(['From: a@acme.test', 'Subject: one', '  two', 'To: b@example.com', '', 'Body', '']),
    );
    expect(parts.fields.map((field) => field.name)).toEqual(['From', 'Subject', 'To']);
    expect(parts.fields[1]?.bytes.toString()).toBe('Subject: one\r\n  two\r\n');
    expect(parts.separator.toString()).toBe('\r\n');
    expect(parts.body.toString()).toBe('Body\r\n');
  });

  it('makes bare LF and CR line endings CRLF', () => {
    const parts = splitRawMessage(Buffer.from('From: a@acme.test\nSubject: x\r\rBody\nline'));
    expect(parts.fields.map((field) => field.bytes.toString())).toEqual(['From: a@acme.test\r\n', 'Subject: x\r\n']);
    expect(parts.body.toString()).toBe('Body\r\nline');
  });

  it('reads a message without an empty line as all header, and one starting with it as all body', () => {
    expect(splitRawMessage(Buffer.from('From: a@acme.test\r\nTo: b@example.com')).fields).toHaveLength(2);
    const bodyOnly = splitRawMessage(Buffer.from('\r\nFrom: not a header\r\n'));
    expect(bodyOnly.fields).toEqual([]);
    expect(bodyOnly.body.toString()).toBe('From: not a header\r\n');
  });

  it('keeps a line that is no field as a field without a name', () => {
    const parts = splitRawMessage(Buffer.from('garbage line\r\nFrom: a@acme.test\r\n\r\n'));
    expect(parts.fields.map((field) => field.name)).toEqual(['', 'From']);
  });
});

describe('preparedRawMessage', () => {
  it('removes Bcc and the relay-only headers (folded lines too) and keeps every other byte as written', () => {
    const message = crlf([
      'From: Acme <a@acme.test>',
      'To: b@example.com',
      'BCC: hidden@example.com,',
      '\tother@example.com',
      'X-Postline-Tags: kind=welcome',
      'x-resend-tags: a=b',
      'Resend-Idempotency-Key: k1',
      'Postline-Idempotency-Key: k2',
      'X-Entity-Ref-ID: 42',
      'List-Unsubscribe: <https://acme.test/u>',
      '',
      'Bcc: in the body stays',
      '',
    ]);
    const prepared = preparedRawMessage(splitRawMessage(message), []);
    expect(prepared.toString()).toBe(
      crlf([
        'From: Acme <a@acme.test>',
        'To: b@example.com',
        'X-Entity-Ref-ID: 42',
        'List-Unsubscribe: <https://acme.test/u>',
        '',
        'Bcc: in the body stays',
        '',
      ]).toString(),
    );
  });

  it('puts the added fields in front', () => {
    const prepared = preparedRawMessage(splitRawMessage(crlf(['From: a@acme.test', '', 'x'])), [
      { name: 'Message-ID', value: '<1@acme.test>' },
      { name: 'Date', value: 'Wed, 25 Nov 2026 13:00:00 +0000' },
    ]);
    expect(prepared.toString()).toBe(
      'Message-ID: <1@acme.test>\r\nDate: Wed, 25 Nov 2026 13:00:00 +0000\r\nFrom: a@acme.test\r\n\r\nx',
    );
  });
});
