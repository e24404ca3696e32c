import { describe, expect, it } from '@jest/globals';
import { checkComposed, composeMessage, toCrlf, type ComposeInput } from './compose-email.ts';

function input(overrides: Partial<ComposeInput> = {}): ComposeInput {
  return {
    from: { name: 'Acme', address: 'orders@acme.test' },
    to: ['Jane <jane@example.com>'],
    cc: ['bob@example.com'],
    replyTo: ['Support <help@acme.test>'],
    subject: 'Your order',
    html: '<h1>Thanks</h1><p>Your order <a href="https://acme.test/o/1">#1</a> ships today.</p>',
    text: null,
    headers: [],
    attachments: [],
    messageId: '<0199a1b2-0000-7000-8000-000000000001@acme.test>',
    date: new Date('2026-11-18T10:00:00.000Z'),
    ...overrides,
  };
}

async function compose(overrides: Partial<ComposeInput> = {}): Promise<string> {
  return (await composeMessage(input(overrides))).toString('latin1');
}

function head(message: string): string {
  return message.slice(0, message.indexOf('\r\n\r\n'));
}

/** Unfolded header lines of the top-level head. */
function headerLines(message: string): string[] {
  return head(message)
    .replace(/\r\n[ \t]/g, ' ')
    .split('\r\n');
}

function headerValues(message: string, name: string): string[] {
  const prefix = `${name.toLowerCase()}:`;
  return headerLines(message)
    .filter((line) => line.toLowerCase().startsWith(prefix))
    .map((line) => line.slice(prefix.length).trim());
}

describe('composeMessage', () => {
  it('writes each standard header once', async () => {
    const message = await compose();
    expect(headerValues(message, 'From')).toEqual(['Acme <orders@acme.test>']);
    expect(headerValues(message, 'To')).toEqual(['Jane <jane@example.com>']);
    expect(headerValues(message, 'Cc')).toEqual(['bob@example.com']);
    expect(headerValues(message, 'Reply-To')).toEqual(['Support <help@acme.test>']);
    expect(headerValues(message, 'Subject')).toEqual(['Your order']);
    expect(headerValues(message, 'Message-ID')).toEqual(['<0199a1b2-0000-7000-8000-000000000001@acme.test>']);
    expect(headerValues(message, 'Date')).toEqual(['Wed, 18 Nov 2026 10:00:00 +0000']);
    expect(headerValues(message, 'MIME-Version')).toEqual(['1.0']);
    expect(headerValues(message, 'Content-Type')).toHaveLength(1);
  });

  it('has no Bcc header: bcc is not even an input', async () => {
    const withBcc = { ...input(), bcc: ['secret@example.com'] } as ComposeInput;
    const message = (await composeMessage(withBcc)).toString('latin1');
    expect(message).not.toMatch(/^bcc:/im);
    expect(message).not.toContain('secret@example.com');
  });

  it('uses CRLF only, even when the content has bare LF or CR', async () => {
    const message = await compose({ text: 'one\ntwo\rthree\r\nfour', html: '<p>a</p>\n<p>b</p>\r<p>c</p>' });
    expect(message).not.toMatch(/\r(?!\n)|(?<!\r)\n/);
    expect(message).toContain('one\r\ntwo\r\nthree\r\nfour');
  });

  it('generates the text part from the html when text is not given', async () => {
    const message = await compose();
    expect(message).toMatch(/Content-Type: multipart\/alternative/);
    const text = message.slice(message.indexOf('Content-Type: text/plain'), message.indexOf('Content-Type: text/html'));
    expect(text).toContain('THANKS');
    expect(text).toContain('Your order #1 [https://acme.test/o/1] ships today.');
    expect(text).not.toContain('<p>');
  });

  it('leaves out the text part when text is ""', async () => {
    const message = await compose({ text: '' });
    expect(message).not.toContain('text/plain');
    expect(message).toMatch(/^Content-Type: text\/html/m);
  });

  it('uses the given text and sends a text-only email', async () => {
    const message = await compose({ html: null, text: 'Just text' });
    expect(message).not.toContain('text/html');
    expect(headerValues(message, 'Content-Type')[0]).toMatch(/^text\/plain/);
    expect(message).toContain('\r\n\r\nJust text');
  });

  it('embeds an attachment with a content id inline, next to the html', async () => {
    const message = await compose({
      html: '<p>Logo: <img src="cid:logo"></p>',
      attachments: [{ filename: 'logo.png', contentType: null, contentId: 'logo', content: Buffer.from('png-bytes') }],
    });
    expect(message).toMatch(/Content-Type: multipart\/related/);
    const part = message.slice(message.indexOf('Content-Type: image/png'));
    expect(part).toMatch(/^Content-ID: <logo>$/m);
    expect(part).toMatch(/^Content-Disposition: inline; filename=logo.png$/m);
    expect(part).toContain(Buffer.from('png-bytes').toString('base64'));
    // The generated text part skips the image instead of showing `cid:logo`.
    expect(message.slice(message.indexOf('text/plain'), message.indexOf('text/html'))).not.toContain('cid:');
  });

  it('derives the content type from the filename and names unnamed attachments', async () => {
    const message = await compose({
      attachments: [
        { filename: 'report.pdf', contentType: null, contentId: null, content: Buffer.from('%PDF') },
        { filename: null, contentType: 'text/csv', contentId: null, content: Buffer.from('a,b') },
        { filename: null, contentType: null, contentId: null, content: Buffer.from([0, 1, 2]) },
      ],
    });
    expect(message).toMatch(/Content-Type: multipart\/mixed/);
    expect(message).toContain('Content-Type: application/pdf; name=report.pdf');
    expect(message).toContain('Content-Disposition: attachment; filename=report.pdf');
    expect(message).toContain('filename=attachment-2.csv');
    expect(message).toContain('Content-Type: application/octet-stream; name=attachment-3.bin');
  });

  it('passes custom headers through', async () => {
    const message = await compose({
      headers: [
        { name: 'X-Entity-Ref-ID', value: '123' },
        { name: 'List-Unsubscribe', value: '<https://acme.test/u/1>, <mailto:u@acme.test>' },
        { name: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' },
      ],
    });
    expect(headerValues(message, 'X-Entity-Ref-ID')).toEqual(['123']);
    expect(headerValues(message, 'List-Unsubscribe')).toEqual(['<https://acme.test/u/1>, <mailto:u@acme.test>']);
    expect(headerValues(message, 'List-Unsubscribe-Post')).toEqual(['List-Unsubscribe=One-Click']);
  });

  it('names custom headers as nodemailer does, the second time as the first', async () => {
    const headers = [
      { name: 'x-smtpapi', value: '1' },
      { name: 'list-id', value: '<news.acme.test>' },
      { name: 'x-mailer-md5', value: '2' },
      { name: 'content-features', value: '3' },
    ];
    for (let round = 0; round < 2; round++) {
      const message = await compose({ headers });
      expect(headerLines(message).filter((line) => /^(X-|List-|Content-f)/i.test(line))).toEqual([
        'X-SMTPAPI: 1',
        'List-ID: <news.acme.test>',
        'X-Mailer-MD5: 2',
        'Content-features: 3',
      ]);
    }
  });

  it('gives every message its own multipart boundary', async () => {
    const boundary = (message: string) => /boundary="([^"]+)"/.exec(head(message))?.[1];
    const [a, b] = [boundary(await compose()), boundary(await compose())];
    expect(a).toMatch(/^--_NmP-[0-9a-f]{32}-Part_1$/);
    expect(b).toMatch(/^--_NmP-[0-9a-f]{32}-Part_1$/);
    expect(a).not.toBe(b);
  });

  it('encodes non-ASCII names and subjects and punycodes an IDN domain', async () => {
    const message = await compose({
      from: { name: 'Bücher, Inc.', address: 'info@bücher.de' },
      subject: 'Grüße 🎉',
    });
    const from = headerValues(message, 'From')[0] ?? '';
    expect(from).toMatch(/^=\?UTF-8\?/);
    expect(from).toContain('<info@xn--bcher-kva.de>');
    expect(headerValues(message, 'Subject')[0]).toMatch(/^=\?UTF-8\?/);
    expect(message).not.toMatch(/[\x80-\xff]/);
  });

  it('quotes a display name with a comma', async () => {
    const message = await compose({ from: { name: 'Acme, Inc.', address: 'o@acme.test' } });
    expect(headerValues(message, 'From')).toEqual(['"Acme, Inc." <o@acme.test>']);
  });

  it('writes a bare address for a nameless sender and no Subject for an empty one', async () => {
    const message = await compose({ from: { name: null, address: 'o@acme.test' }, subject: '' });
    expect(headerValues(message, 'From')).toEqual(['o@acme.test']);
    expect(headerValues(message, 'Subject')).toEqual([]);
  });

  it('keeps every line within 998 octets for a one-line html body', async () => {
    const message = await compose({ html: `<p>${'x'.repeat(5000)}</p>`, text: '' });
    for (const line of message.split('\r\n')) expect(line.length).toBeLessThanOrEqual(998);
  });

  it('refuses a Message-ID without angle brackets', async () => {
    await expect(composeMessage(input({ messageId: 'id@acme.test' }))).rejects.toThrow(/Message-ID/);
  });
});

describe('checkComposed', () => {
  const good = [
    'From: a@acme.test',
    'To: b@example.com',
    'Subject: Hi',
    'Message-ID: <1@acme.test>',
    'Date: Wed, 18 Nov 2026 10:00:00 +0000',
    'MIME-Version: 1.0',
    'Content-Type: text/plain',
    '',
    'Hi',
    '',
  ];
  const raw = (lines: string[], eol = '\r\n') => Buffer.from(lines.join(eol), 'latin1');

  it('accepts a well-formed message', () => {
    expect(() => checkComposed(raw(good))).not.toThrow();
  });

  it('refuses a repeated singleton header, whatever its case', () => {
    expect(() => checkComposed(raw(['from: evil@x.test', ...good]))).toThrow(/from/);
    expect(() => checkComposed(raw(['SUBJECT: again', ...good]))).toThrow(/subject/);
  });

  it('refuses a Bcc header and a missing required header', () => {
    expect(() => checkComposed(raw(['Bcc: x@example.com', ...good]))).toThrow(/Bcc/);
    expect(() => checkComposed(raw(good.filter((line) => !line.startsWith('Message-ID'))))).toThrow(/message-id/);
  });

  it('refuses bare LF and bare CR', () => {
    expect(() => checkComposed(raw(good, '\n'))).toThrow(/bare/);
    expect(() => checkComposed(Buffer.concat([raw(good), Buffer.from('a\rb\r\n')]))).toThrow(/bare/);
  });

  it('refuses a line over 998 octets', () => {
    expect(() => checkComposed(raw([...good.slice(0, -1), 'x'.repeat(999), '']))).toThrow(/999/);
  });
});

describe('toCrlf', () => {
  it('turns bare LF and bare CR into CRLF and keeps CRLF and 8-bit bytes', () => {
    const input = Buffer.concat([Buffer.from('a\nb\rc\r\nd'), Buffer.from([0xc3, 0xa9, 0x0a])]);
    expect(toCrlf(input)).toEqual(
      Buffer.concat([Buffer.from('a\r\nb\r\nc\r\nd'), Buffer.from([0xc3, 0xa9, 0x0d, 0x0a])]),
    );
  });

  it('returns a message that is already CRLF throughout as it is', () => {
    const input = Buffer.from('a\r\nb\r\n');
    expect(toCrlf(input)).toBe(input);
  });
});
