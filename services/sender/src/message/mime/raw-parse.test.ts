import { describe, expect, it } from '@jest/globals';
import { readRawMessage } from './raw-parse.ts';
import { splitRawMessage } from './raw-message.ts';

const read = (lines: string[]) => {
  const raw = Buffer.from(lines.join('\r\n'), 'utf8');
  return readRawMessage(raw, splitRawMessage(raw));
};

describe('readRawMessage', () => {
  it('reads addresses (display names decoded, group members), subject, bodies and the fields written', async () => {
    const fields = await read([
      'From: =?UTF-8?Q?Acme_Caf=C3=A9?= <hello@acme.test>',
      'To: Jane <jane@example.com>, team: bob@example.com, eve@example.com;',
      'Cc: carol@example.com',
      'Reply-To: support@acme.test',
      'Subject: =?UTF-8?B?SGVsbG8gd29ybGQ=?=',
      'Message-ID:',
      ' <abc@acme.test>',
      'X-Postline-Tags: kind=welcome,',
      ' plan=pro',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p>Hi</p>',
    ]);
    expect(fields.from).toEqual([{ name: 'Acme Café', address: 'hello@acme.test' }]);
    expect(fields.to.map((a) => a.address)).toEqual(['jane@example.com', 'bob@example.com', 'eve@example.com']);
    expect(fields.cc).toEqual([{ name: '', address: 'carol@example.com' }]);
    expect(fields.replyTo.map((a) => a.address)).toEqual(['support@acme.test']);
    expect(fields.subject).toBe('Hello world');
    expect(fields.html).toBe('<p>Hi</p>');
    expect(fields.messageId).toBe('<abc@acme.test>');
    expect(fields.tags).toEqual({ header: 'X-Postline-Tags', value: 'kind=welcome, plan=pro' });
    expect(fields.hasDate).toBe(false);
    expect(fields.fieldCounts.get('to')).toBe(1);
  });

  it('reads X-Resend-Tags when there is no X-Postline-Tags, and a text body without generating html', async () => {
    const fields = await read([
      'From: a@acme.test',
      'X-Resend-Tags: a=b',
      'Date: Wed, 25 Nov 2026 13:00:00 +0000',
      '',
      'plain',
    ]);
    expect(fields.tags).toEqual({ header: 'X-Resend-Tags', value: 'a=b' });
    expect(fields.text?.trim()).toBe('plain');
    expect(fields.html).toBeNull();
    expect(fields.hasDate).toBe(true);
  });

  it('counts repeated fields and reads garbage as a message without addresses', async () => {
    expect((await read(['Subject: a', 'subject: b', '', ''])).fieldCounts.get('subject')).toBe(2);
    const garbage = await read(['\u0001\u0002 not a message at all', '']);
    expect(garbage.from).toEqual([]);
    expect(garbage.to).toEqual([]);
  });
});
