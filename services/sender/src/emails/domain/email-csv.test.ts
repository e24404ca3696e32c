import { describe, expect, it } from '@jest/globals';
import { csvField, EMAIL_CSV_HEADER, emailCsvLine } from './email-csv.ts';

describe('the emails CSV', () => {
  it('quotes what needs quoting, doubling quotes, and defuses what a spreadsheet would run', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a, b')).toBe('"a, b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('+1')).toBe("'+1");
    expect(csvField('@cmd')).toBe("'@cmd");
  });

  it('writes an email as one CRLF-ended line under the header, which a byte-order mark starts', () => {
    expect(EMAIL_CSV_HEADER).toBe(
      '\uFEFFid,created_at,from,to,cc,bcc,subject,last_event,scheduled_at,message_id,tags\r\n',
    );
    const line = emailCsvLine({
      id: '01a2',
      created_at: new Date('2026-11-27T10:00:00Z'),
      from_header: 'Acme <hi@acme.com>',
      to_addresses: ['a@x.com', 'b@x.com'],
      cc_addresses: [],
      bcc_addresses: [],
      subject: 'Hello, world',
      last_event: 'delivered',
      scheduled_at: null,
      message_id: '<01a2@acme.com>',
      tags: [
        { name: 'kind', value: 'welcome' },
        { name: 'plan', value: 'pro' },
      ],
    });
    expect(line).toBe(
      '01a2,2026-11-27T10:00:00.000Z,Acme <hi@acme.com>,"a@x.com, b@x.com",,,"Hello, world",delivered,,<01a2@acme.com>,kind=welcome;plan=pro\r\n',
    );
  });
});
