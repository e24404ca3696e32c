import { describe, expect, it } from '@jest/globals';
import {
  parseRawEmail,
  parseTagsHeader,
  type RawEnvelope,
  type RawMessageFields,
  type RawEmailRequest,
} from './raw-email.ts';

const ID = '019a0000-0000-7000-8000-000000000001';

function fields(overrides: Partial<RawMessageFields> = {}): RawMessageFields {
  return {
    fieldCounts: new Map([
      ['from', 1],
      ['to', 1],
      ['subject', 1],
    ]),
    from: [{ name: 'Acme', address: 'hello@Acme.test' }],
    to: [{ name: 'Jane', address: 'jane@example.com' }],
    cc: [],
    bcc: [],
    replyTo: [],
    subject: 'Welcome',
    html: '<p>Hi</p>',
    text: null,
    tags: null,
    messageId: null,
    hasDate: false,
    ...overrides,
  };
}

const ENVELOPE: RawEnvelope = { from: 'bounces@acme.test', to: 'jane@example.com, <hidden@example.com>' };

function accepted(input: RawMessageFields, envelope: RawEnvelope = ENVELOPE): RawEmailRequest {
  const result = parseRawEmail(input, envelope, ID);
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.refusal)}`);
  return result.email;
}

function refusal(input: RawMessageFields, envelope: RawEnvelope = ENVELOPE) {
  const result = parseRawEmail(input, envelope, ID);
  if (result.ok) throw new Error('accepted');
  return result.refusal;
}

describe('parseRawEmail', () => {
  it('makes the JSON request of the message: from, to, the envelope recipients, bcc the hidden ones', () => {
    const email = accepted(fields());
    expect(email.request.fromHeader).toBe('Acme <hello@Acme.test>');
    expect(email.request.fromDomain).toBe('acme.test');
    expect(email.request.to).toEqual(['Jane <jane@example.com>']);
    expect(email.request.bcc).toEqual(['hidden@example.com']);
    expect(email.recipients).toEqual(['jane@example.com', 'hidden@example.com']);
    expect(email.envelopeFromDomain).toBe('acme.test');
    expect(email.messageId).toBe(`<${ID}@acme.test>`);
    expect(email.addMessageId).toBe(true);
    expect(email.request.subject).toBe('Welcome');
    expect(email.request.html).toBe('<p>Hi</p>');
  });

  it('quotes a display name with specials', () => {
    const email = accepted(fields({ to: [{ name: 'Doe, "J"', address: 'j@example.com' }] }));
    expect(email.request.to).toEqual(['"Doe, \\"J\\"" <j@example.com>']);
  });

  it("keeps the client's Message-ID", () => {
    const email = accepted(fields({ messageId: '<abc.1@acme.test>' }));
    expect(email.messageId).toBe('<abc.1@acme.test>');
    expect(email.addMessageId).toBe(false);
    expect(refusal(fields({ messageId: 'no brackets' })).message).toMatch(/Message-ID/);
  });

  it('without an envelope recipient list, sends to the To, Cc and Bcc headers', () => {
    const email = accepted(
      fields({ cc: [{ name: '', address: 'carol@example.com' }], bcc: [{ name: '', address: 'Bob@Example.com' }] }),
      { from: undefined, to: undefined },
    );
    expect(email.recipients).toEqual(['jane@example.com', 'carol@example.com', 'Bob@example.com']);
    expect(email.request.bcc).toEqual(['Bob@example.com']);
    expect(email.envelopeFromDomain).toBeNull();
  });

  it('refuses a message without From, with two From addresses, or an invalid one', () => {
    expect(refusal(fields({ from: [] }))).toEqual({
      name: 'missing_required_field',
      message: 'The message has no `From` header.',
    });
    expect(
      refusal(
        fields({
          from: [
            { name: '', address: 'a@acme.test' },
            { name: '', address: 'b@acme.test' },
          ],
        }),
      ).name,
    ).toBe('validation_error');
    expect(refusal(fields({ from: [{ name: '', address: 'not an address' }] })).message).toMatch(/`From` header/);
  });

  it('refuses no recipients (422 missing_required_field) and more than 50', () => {
    expect(refusal(fields({ to: [] }), { from: '', to: '' }).name).toBe('missing_required_field');
    const many = Array.from({ length: 51 }, (_, i) => `r${i}@example.com`).join(',');
    expect(refusal(fields(), { from: '', to: many }).message).toMatch(/at most 50/);
    expect(refusal(fields(), { from: '', to: 'jane@example.com, not-an-address' }).message).toMatch(/RCPT TO/);
  });

  it('refuses a second copy of a singleton header', () => {
    const counts = new Map([
      ['from', 1],
      ['subject', 2],
    ]);
    expect(refusal(fields({ fieldCounts: counts }))).toEqual({
      name: 'validation_error',
      message: 'The message has more than one `Subject` header; it may have at most one.',
    });
  });

  it('refuses an envelope sender that is no address', () => {
    expect(refusal(fields(), { from: 'nobody', to: 'jane@example.com' }).message).toMatch(/MAIL FROM/);
  });

  it('shows header text without controls and stores bodies without NUL', () => {
    const email = accepted(fields({ subject: 'a\r\nBcc: x', text: 'a\u0000b' }));
    expect(email.request.subject).toBe('a  Bcc: x');
    expect(email.request.text).toBe('ab');
  });
});

describe('parseTagsHeader', () => {
  it('reads name=value pairs separated by commas', () => {
    expect(parseTagsHeader({ header: 'X-Postline-Tags', value: 'kind=welcome, plan=pro' })).toEqual([
      { name: 'kind', value: 'welcome' },
      { name: 'plan', value: 'pro' },
    ]);
    expect(parseTagsHeader(null)).toEqual([]);
  });

  it("refuses a pair without '=' and what the JSON tag rules refuse", () => {
    expect(parseTagsHeader({ header: 'X-Resend-Tags', value: 'kind' })).toMatchObject({
      ok: false,
      refusal: { message: expect.stringMatching(/X-Resend-Tags/) },
    });
    expect(parseTagsHeader({ header: 'X-Postline-Tags', value: 'kind=a b' })).toMatchObject({
      ok: false,
      refusal: { name: 'validation_error' },
    });
    expect(parseTagsHeader({ header: 'X-Postline-Tags', value: 'a=1, a=2' })).toMatchObject({
      ok: false,
      refusal: { message: expect.stringMatching(/unique/) },
    });
  });
});
