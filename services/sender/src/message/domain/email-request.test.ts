import { describe, expect, it } from '@jest/globals';
import { ApiRequests } from '@postline/contracts';
import {
  parseEmailRequest,
  parseTemplateReference,
  type EmailRequest,
  type ParseEmailOptions,
} from './email-request.ts';
import type { Refusal } from './refusal.ts';

// A Wednesday.
const NOW = new Date('2026-11-18T10:00:00.000Z');
const OPTIONS: ParseEmailOptions = { now: NOW, batch: false };

function body(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    from: 'Acme <orders@Acme.TEST>',
    to: 'jane@example.com',
    subject: 'Your order',
    html: '<p>Hi</p>',
    ...overrides,
  };
}

/** The request a body parses to; fails the test if it is refused. */
function parsed(input: unknown, options = OPTIONS): EmailRequest {
  const result = parseEmailRequest(input, options);
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.refusal)}`);
  return result.request;
}

/** Why a parse refused (the public error's name and message; every refusal is a 422); fails the test if it did not. */
function refusalOf(result: { ok: true } | { ok: false; refusal: Refusal }): Refusal {
  if (result.ok) throw new Error('expected a refusal');
  return result.refusal;
}

function parseFails(overrides: Record<string, unknown>, options = OPTIONS) {
  return refusalOf(parseEmailRequest(body(overrides), options));
}

const FROM_MESSAGE =
  'Invalid `from` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format';

describe('parseEmailRequest: the minimal email', () => {
  it('normalises a minimal body', () => {
    const email = parsed(body(), OPTIONS);
    expect(email).toEqual({
      from: { name: 'Acme', address: 'orders@acme.test' },
      fromDomain: 'acme.test',
      fromHeader: 'Acme <orders@Acme.TEST>',
      to: ['jane@example.com'],
      cc: [],
      bcc: [],
      replyTo: [],
      subject: 'Your order',
      html: '<p>Hi</p>',
      text: null,
      headers: [],
      attachments: [],
      tags: [],
      scheduledAt: null,
      topicId: null,
    });
  });

  it('treats null as absent and ignores unknown keys, as SDKs send both', () => {
    const email = parsed(
      body({
        cc: null,
        bcc: null,
        reply_to: null,
        text: null,
        headers: null,
        attachments: null,
        tags: null,
        scheduled_at: null,
        topic_id: null,
        template: null,
        react: null,
        id: 'x',
      }),
      OPTIONS,
    );
    expect(email.cc).toEqual([]);
    expect(email.text).toBeNull();
    expect(email.scheduledAt).toBeNull();
  });

  it('refuses a body that is not an object', () => {
    expect(refusalOf(parseEmailRequest([body()], OPTIONS))).toMatchObject({
      name: 'validation_error',
    });
    expect(refusalOf(parseEmailRequest(undefined, OPTIONS))).toEqual({
      name: 'missing_required_field',
      message: 'Missing `from` field.',
    });
  });

  it('reads a template reference, and refuses a malformed one or html and text beside it', () => {
    expect(parseTemplateReference({ to: 'a@b.com' })).toEqual({ ok: true, template: null });
    expect(parseTemplateReference({ template: { id: 'welcome', variables: { N: 1 } } })).toEqual({
      ok: true,
      template: { idOrAlias: 'welcome', variables: { N: 1 } },
    });
    expect(refusalOf(parseTemplateReference({ template: {} }))).toEqual({
      name: 'missing_required_field',
      message: 'Missing `template.id` field.',
    });
    expect(refusalOf(parseTemplateReference({ template: 'welcome' })).name).toBe('validation_error');
    expect(refusalOf(parseTemplateReference({ template: { id: 'w', variables: [] } })).name).toBe('validation_error');
    expect(refusalOf(parseTemplateReference({ html: '<p/>', template: { id: 'w' } })).message).toContain('`html`');
    expect(refusalOf(parseTemplateReference({ text: '', template: { id: 'w' } })).message).toContain('`text`');
  });

  it('keeps a UUID topic_id and refuses anything else', () => {
    const id = '0199a1b2-0000-7000-8000-000000000001';
    expect(parsed(body({ topic_id: id }), OPTIONS).topicId).toBe(id);
    expect(parseFails({ topic_id: 'news' })).toMatchObject({ name: 'invalid_parameter' });
  });
});

describe('parseEmailRequest: from', () => {
  it('requires from', () => {
    for (const from of [undefined, null, '']) {
      expect(parseFails({ from })).toEqual({
        name: 'missing_required_field',
        message: 'Missing `from` field.',
      });
    }
  });

  it('accepts a bare address and a quoted display name, and punycodes an IDN domain', () => {
    expect(parsed(body({ from: 'o@x.com' }), OPTIONS).from).toEqual({ name: null, address: 'o@x.com' });
    expect(parsed(body({ from: '"Acme, Inc. \\"EU\\"" <o@x.com>' }), OPTIONS).from).toEqual({
      name: 'Acme, Inc. "EU"',
      address: 'o@x.com',
    });
    const idn = parsed(body({ from: 'Bücher <Info@Bücher.DE>' }), OPTIONS);
    expect(idn.from).toEqual({ name: 'Bücher', address: 'Info@bücher.de' });
    expect(idn.fromDomain).toBe('xn--bcher-kva.de');
  });

  it.each([
    'acme.test',
    'Acme <orders@acme.test',
    'Acme orders@acme.test',
    'orders@localhost',
    'orders@127.0.0.1',
    'orders@[127.0.0.1]',
    'a b@acme.test',
    '.a@acme.test',
    'a..b@acme.test',
    'a@acme.test, b@acme.test',
    'Acme <a@acme.test> <b@acme.test>',
    'Ac"me <a@acme.test>',
    '"Acme <a@acme.test>',
    'Acme\r\nBcc: victim@x.com <a@acme.test>',
    'Acme\n <a@acme.test>',
    'a@acme.test\r\nBcc: victim@x.com',
    'Acme\u0000 <a@acme.test>',
  ])('refuses from %j with the reference message', (from) => {
    expect(parseFails({ from })).toEqual({ name: 'invalid_parameter', message: FROM_MESSAGE });
  });

  it('refuses a from that is not a string', () => {
    expect(parseFails({ from: ['a@acme.test'] })).toMatchObject({ name: 'invalid_parameter', message: FROM_MESSAGE });
  });
});

describe('parseEmailRequest: recipients', () => {
  it('takes a string or an array and keeps the strings as given, trimmed', () => {
    const email = parsed(
      body({
        to: ['Jane <jane@example.com>', ' bob@example.com '],
        cc: 'c@example.com',
        bcc: ['d@example.com'],
        reply_to: 'Support <help@acme.test>',
      }),
      OPTIONS,
    );
    expect(email.to).toEqual(['Jane <jane@example.com>', 'bob@example.com']);
    expect(email.cc).toEqual(['c@example.com']);
    expect(email.bcc).toEqual(['d@example.com']);
    expect(email.replyTo).toEqual(['Support <help@acme.test>']);
  });

  it('requires at least one to', () => {
    for (const to of [undefined, null, '', []]) {
      expect(parseFails({ to })).toMatchObject({ name: 'missing_required_field', message: 'Missing `to` field.' });
    }
  });

  it('allows 50 addresses per field and refuses 51', () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => `u${i}@example.com`);
    expect(parsed(body({ to: list(50), cc: list(50), bcc: list(50) }), OPTIONS).to).toHaveLength(50);
    for (const field of ['to', 'cc', 'bcc', 'reply_to']) {
      expect(parseFails({ [field]: list(51) })).toMatchObject({ name: 'validation_error' });
    }
  });

  it.each([
    ['to', 'not-an-address'],
    ['cc', ['ok@example.com', 'bad@']],
    ['bcc', 'x@example.com\r\nSubject: hi'],
    ['reply_to', 'Support\n <help@acme.test>'],
    ['reply_to', 5],
  ])('refuses an invalid %s', (field, value) => {
    expect(parseFails({ [field]: value })).toMatchObject({ name: 'validation_error' });
  });
});

describe('parseEmailRequest: subject and content', () => {
  it('requires subject', () => {
    expect(parseFails({ subject: undefined })).toEqual({
      name: 'missing_required_field',
      message: 'Missing `subject` field.',
    });
    expect(parseFails({ subject: null })).toMatchObject({ name: 'missing_required_field' });
  });

  it.each(['Hi\r\nBcc: victim@x.com', 'Hi\nthere', 'Hi\rthere', 'Hi\u0000'])('refuses subject %j', (subject) => {
    expect(parseFails({ subject })).toMatchObject({ name: 'validation_error' });
  });

  it('keeps a tab and non-ASCII in the subject', () => {
    expect(parsed(body({ subject: 'Grüße\tund 🎉' }), OPTIONS).subject).toBe('Grüße\tund 🎉');
  });

  it('needs html or a non-empty text', () => {
    const missing = { name: 'validation_error', message: 'Missing `html` or `text` field.' };
    expect(parseFails({ html: undefined })).toEqual(missing);
    expect(parseFails({ html: null, text: '' })).toEqual(missing);
    expect(parsed(body({ html: undefined, text: 'Hi' }), OPTIONS)).toMatchObject({ html: null, text: 'Hi' });
  });

  it('tells "text not given" (null) from "no text part" ("")', () => {
    expect(parsed(body(), OPTIONS).text).toBeNull();
    expect(parsed(body({ text: '' }), OPTIONS).text).toBe('');
  });

  it('refuses html that is not a string', () => {
    expect(parseFails({ html: { a: 1 } })).toMatchObject({ name: 'validation_error' });
  });
});

describe('parseEmailRequest: headers', () => {
  it('passes custom headers through in order', () => {
    const email = parsed(
      body({
        headers: { 'X-Entity-Ref-ID': '123', 'List-Unsubscribe': '<https://acme.test/u/1>', 'In-Reply-To': '<a@b.c>' },
      }),
      OPTIONS,
    );
    expect(email.headers).toEqual([
      { name: 'X-Entity-Ref-ID', value: '123' },
      { name: 'List-Unsubscribe', value: '<https://acme.test/u/1>' },
      { name: 'In-Reply-To', value: '<a@b.c>' },
    ]);
  });

  it.each([
    [{ 'X-Test': 'a\r\nBcc: victim@x.com' }],
    [{ 'X-Test': 'a\nb' }],
    [{ 'X-Test': 'a\rb' }],
    [{ 'X-Test': 'a\u0000b' }],
    [{ 'X-Test\r\nBcc': 'victim@x.com' }],
    [{ 'X-Te\u0000st': 'a' }],
    [{ 'X Test': 'a' }],
    [{ 'X-Test:': 'a' }],
    [{ '': 'a' }],
    [{ 'X-Tëst': 'a' }],
    [{ 'X-Test': 5 }],
    [{ 'X-Test': 'a', 'x-test': 'b' }],
    [{ 'X-Long': 'a'.repeat(991) }],
  ])('refuses header injection and malformed headers: %j', (headers) => {
    expect(parseFails({ headers })).toMatchObject({ name: 'validation_error' });
  });

  it.each([
    'From',
    'from',
    'Sender',
    'Reply-To',
    'To',
    'CC',
    'Bcc',
    'Subject',
    'Date',
    'Message-ID',
    'MIME-Version',
    'Content-Type',
    'Content-Transfer-Encoding',
    'Return-Path',
    'DKIM-Signature',
    'Authentication-Results',
  ])('refuses the %s header, which Postline writes itself', (name) => {
    expect(parseFails({ headers: { [name]: 'x@acme.test' } })).toMatchObject({
      name: 'validation_error',
    });
  });

  it('refuses headers that are not an object', () => {
    expect(parseFails({ headers: [['X-Test', 'a']] })).toMatchObject({ name: 'validation_error' });
  });
});

describe('parseEmailRequest: attachments', () => {
  const bytes = [0x25, 0x50, 0x44, 0x46, 0x00, 0xff];

  it('accepts the three content shapes SDKs send', () => {
    const email = parsed(
      body({
        attachments: [
          { filename: 'a.pdf', content: Buffer.from(bytes).toString('base64') },
          { filename: 'b.pdf', content: bytes },
          { filename: 'c.pdf', content: JSON.parse(JSON.stringify(Buffer.from(bytes))) as unknown },
        ],
      }),
      OPTIONS,
    );
    for (const attachment of email.attachments) expect([...attachment.content]).toEqual(bytes);
  });

  it('accepts wrapped base64 and keeps filename, content type and content id', () => {
    const content = `${Buffer.from('x'.repeat(100)).toString('base64').slice(0, 60)}\r\n${Buffer.from('x'.repeat(100)).toString('base64').slice(60)}`;
    const [attachment] = parsed(
      body({ attachments: [{ filename: 'logo.png', content, content_type: 'image/png', content_id: 'logo' }] }),
      OPTIONS,
    ).attachments;
    expect(attachment).toEqual({
      filename: 'logo.png',
      contentType: 'image/png',
      contentId: 'logo',
      content: Buffer.from('x'.repeat(100)),
    });
  });

  it('reads the legacy inline_content_id and strips angle brackets from a content id', () => {
    const [legacy] = parsed(
      body({ attachments: [{ content: 'eA==', inline_content_id: 'img1' }] }),
      OPTIONS,
    ).attachments;
    expect(legacy?.contentId).toBe('img1');
    const [bracketed] = parsed(body({ attachments: [{ content: 'eA==', content_id: '<img2>' }] }), OPTIONS).attachments;
    expect(bracketed?.contentId).toBe('img2');
  });

  it('refuses a remote path, which is not supported yet', () => {
    const error = parseFails({ attachments: [{ filename: 'a.pdf', path: 'https://acme.test/a.pdf' }] });
    expect(error).toMatchObject({ name: 'invalid_attachment' });
    expect(error.message).toMatch(/not supported yet/);
  });

  it.each([
    [{ filename: 'a.pdf' }],
    [{ filename: 'a.pdf', content: '' }],
    [{ filename: 'a.pdf', content: '==' }],
    [{ filename: 'a.pdf', content: '   ' }],
    [{ filename: 'a.pdf', content: [] }],
    [{ filename: 'a.pdf', content: { type: 'Buffer', data: [] } }],
    [{ content: 'not base64!' }],
    [{ content: 'eA===' }],
    [{ content: 'e=A=' }],
    [{ content: 'data:application/pdf;base64,eA==' }],
    [{ content: 'e' }],
    [{ content: [1, 256] }],
    [{ content: [1, -1] }],
    [{ content: [1, 2.5] }],
    [{ content: ['1'] }],
    [{ content: { type: 'Buffer', data: 'eA==' } }],
    [{ content: { type: 'Blob', data: [1] } }],
    [{ content: 'eA==', filename: 'a\r\nContent-Type: text/html' }],
    [{ content: 'eA==', content_type: 'image/png\r\nX-Evil: 1' }],
    [{ content: 'eA==', content_type: 'png' }],
    [{ content: 'eA==', content_id: 'a'.repeat(128) }],
    [{ content: 'eA==', content_id: 'a b' }],
    ['eA=='],
  ])('refuses attachment %j', (attachment) => {
    expect(parseFails({ attachments: [attachment] })).toMatchObject({ name: 'invalid_attachment' });
  });

  it('allows a content id of 127 characters', () => {
    const contentId = 'a'.repeat(127);
    expect(
      parsed(body({ attachments: [{ content: 'eA==', content_id: contentId }] }), OPTIONS).attachments[0]?.contentId,
    ).toBe(contentId);
  });

  it('refuses more than 40 MB of attachments counted as base64', () => {
    const big = Buffer.alloc(16 * 1024 * 1024).toString('base64'); // 21.3 MB as base64
    expect(parsed(body({ attachments: [{ content: big }] }), OPTIONS).attachments).toHaveLength(1);
    expect(parseFails({ attachments: [{ content: big }, { content: big }] })).toMatchObject({
      name: 'validation_error',
    });
  });

  it('refuses attachments in a batch email', () => {
    const batch = { now: NOW, batch: true };
    expect(parseFails({ attachments: [{ content: 'eA==' }] }, batch)).toMatchObject({
      name: 'validation_error',
    });
    expect(parsed(body({ attachments: [] }), batch).attachments).toEqual([]);
  });
});

describe('parseEmailRequest: tags', () => {
  it('keeps tags', () => {
    const tags = [
      { name: 'category', value: 'confirm_email' },
      { name: 'user-id', value: 'A-1_2' },
    ];
    expect(parsed(body({ tags }), OPTIONS).tags).toEqual(tags);
  });

  it.each([
    [{ name: 'has space', value: 'x' }],
    [{ name: 'x', value: 'a\r\nb' }],
    [{ name: 'x\u0000', value: 'a' }],
    [{ name: 'ümlaut', value: 'a' }],
    [{ name: 'x', value: '' }],
    [{ name: 'x' }],
    [{ name: 'x', value: 1 }],
    [{ name: 'a'.repeat(257), value: 'x' }],
    ['x'],
  ])('refuses tag %j, naming it', (tag) => {
    const error = parseFails({ tags: [tag] });
    expect(error).toMatchObject({ name: 'validation_error' });
  });

  it('names the offending tag', () => {
    expect(
      parseFails({
        tags: [
          { name: 'ok', value: 'ok' },
          { name: 'bad tag', value: 'x' },
        ],
      }).message,
    ).toContain('"bad tag"');
  });

  it('allows 75 tags, refuses 76 and refuses a repeated name', () => {
    const tags = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `t${i}`, value: 'v' }));
    expect(parsed(body({ tags: tags(75) }), OPTIONS).tags).toHaveLength(75);
    expect(parseFails({ tags: tags(76) })).toMatchObject({ name: 'validation_error' });
    expect(
      parseFails({
        tags: [
          { name: 'a', value: '1' },
          { name: 'a', value: '2' },
        ],
      }),
    ).toMatchObject({ name: 'validation_error' });
  });
});

describe('parseEmailRequest: scheduled_at', () => {
  it('is applied to scheduled_at in the body', () => {
    expect(parsed(body({ scheduled_at: 'in 1 min' }), OPTIONS).scheduledAt).toEqual(
      new Date('2026-11-18T10:01:00.000Z'),
    );
    expect(parsed(body({ scheduled_at: 'in 1 min' }), { now: NOW, batch: true }).scheduledAt).not.toBeNull();
    expect(parseFails({ scheduled_at: 1795168800000 })).toMatchObject({ name: 'validation_error' });
    expect(parseFails({ scheduled_at: 'whenever' })).toMatchObject({ name: 'validation_error' });
  });
});

describe('parseEmailRequest: the documented schema', () => {
  it("answers the schema's own message for a body it refuses", () => {
    for (const overrides of [{ subject: 5 }, { tags: 'x' }, { headers: { 'X-A': 'a\r\nb' } }, { attachments: [{}] }]) {
      const issue = ApiRequests.SendEmailBody.safeParse(body(overrides)).error?.issues[0];
      expect(issue).toBeDefined();
      expect(parseFails(overrides).message).toBe(issue?.message);
    }
  });

  it('refuses a field only after the checks of the fields before it, whether the schema or the sender makes them', () => {
    expect(parseFails({ from: 'bad', subject: 5 })).toEqual({ name: 'invalid_parameter', message: FROM_MESSAGE });
    expect(parseFails({ html: undefined, headers: { 'X A': 'v' } }).message).toBe('Missing `html` or `text` field.');
    expect(parseFails({ attachments: [{ content: 5 }] }, { now: NOW, batch: true })).toEqual({
      name: 'validation_error',
      message: 'Attachments are not supported in batch emails.',
    });
  });

  it('names the attachment and the header a refusal is about', () => {
    expect(parseFails({ attachments: [{ content: 'eA==' }, { content: 'eA==', filename: '' }] })).toEqual({
      name: 'invalid_attachment',
      message:
        'Invalid `attachments[1].filename`: it must be a non-empty string of at most 255 characters without line breaks.',
    });
    expect(parseFails({ headers: { 'X A': 'v' } }).message).toBe(
      'Invalid header name "X A": a header name is printable ASCII without spaces or colons.',
    );
    expect(parseFails({ headers: { 'X-A': 5 } }).message).toBe('Invalid value of header "X-A": it must be a string.');
  });
});
