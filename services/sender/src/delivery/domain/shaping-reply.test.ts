import { describe, expect, it } from '@jest/globals';
import { replyCodesOf, sanitizeReply } from './shaping-reply.ts';

// Providers' replies as they send them (nodemailer joins a multi-line reply's lines with \n).
const GMAIL = [
  '421-4.7.28 [203.0.113.5      15] Our system has detected an unusual rate of',
  '421-4.7.28 unsolicited mail originating from your IP address. To protect our',
  '421-4.7.28 users from spam, mail sent from your IP address has been temporarily',
  '421-4.7.28 rate limited. Please visit',
  '421-4.7.28  https://support.google.com/mail/?p=UnsolicitedRateLimitError to',
  '421 4.7.28 review our Bulk Email Senders Guidelines. d75a77b69052e-4b2cd3b1c1dsi1234567qt.123 - gsmtp',
].join('\n');
const MICROSOFT =
  '451 4.7.650 The mail server [203.0.113.5] has been temporarily rate limited due to IP reputation. For e-mail ' +
  'delivery information, see https://aka.ms/postmaster (S775) [Name=Protocol Filter Agent][AGT=PFA]' +
  '[MxId=11BB9E3B4A2F1C6D] [DB5PEPF00014B9F.eurprd02.prod.outlook.com 2026-12-11T10:00:00.000Z 08DD3329F9A7B4C1]';
const YAHOO =
  '421 4.7.0 [TSS04] Messages from 203.0.113.5 temporarily deferred due to unexpected volume or user complaints - ' +
  '4.16.55.1; see https://postmaster.yahooinc.com/error-codes';

describe('a reply as every team reads it', () => {
  it('drops the recipient or sender a reply names, keeping its codes and words', () => {
    expect(sanitizeReply('450 4.7.1 <bob@acme.com>: Recipient address rejected: Greylisted')).toBe(
      '450 4.7.1 <…>: Recipient address rejected: Greylisted',
    );
    expect(sanitizeReply('450 4.7.1 <news@teamb.example>: Sender address rejected')).toBe(
      '450 4.7.1 <…>: Sender address rejected',
    );
    expect(sanitizeReply('10 deferrals in a row, the last: 452 4.2.2 <x@y> mailbox full')).toBe(
      '10 deferrals in a row, the last: 452 4.2.2 <…> mailbox full',
    );
  });

  it('drops an address outside angle brackets, quoted, as a literal, or ending a sentence', () => {
    expect(sanitizeReply('452 4.2.2 bob.smith+news@acme-legal.com is over quota')).toBe('452 4.2.2 … is over quota');
    expect(sanitizeReply('451 4.7.1 RCPT TO:bob@acme.com refused (try later)')).toBe(
      '451 4.7.1 RCPT TO:… refused (try later)',
    );
    expect(sanitizeReply('450 4.2.0 "Bob Smith"@acme.com, user@[192.0.2.7]; (ann@b.example)')).toBe(
      '450 4.2.0 …, …; (…)',
    );
    expect(sanitizeReply('452 4.2.2 Mailbox full for ann@b.example.')).toBe('452 4.2.2 Mailbox full for ….');
    expect(sanitizeReply('451 4.3.0 <unclosed ann@b.example')).toBe('451 4.3.0 <unclosed …');
    expect(sanitizeReply('451 4.3.0 <> and @')).toBe('451 4.3.0 <> and @');
  });

  it("keeps Gmail's, Microsoft's and Yahoo's replies whole", () => {
    expect(sanitizeReply(GMAIL)).toBe(GMAIL);
    expect(sanitizeReply(MICROSOFT)).toBe(MICROSOFT);
    expect(sanitizeReply(YAHOO)).toBe(YAHOO);
  });

  it('gives a cleaned reply back as it is', () => {
    const once = sanitizeReply('450 4.7.1 <bob@acme.com>: rejected for carol@acme.com.');
    expect(sanitizeReply(once)).toBe(once);
    expect(replyCodesOf(replyCodesOf(GMAIL)!)).toBe('421 4.7.28');
  });
});

describe("another mail server's reply", () => {
  it('is told by its codes alone', () => {
    expect(replyCodesOf('450 4.7.1 <bob@acme.com>: Recipient address rejected: Greylisted')).toBe('450 4.7.1');
    expect(replyCodesOf('10 deferrals in a row, the last: 452 4.2.2 <x@y> mailbox full')).toBe(
      '10 deferrals in a row, the last: 452 4.2.2',
    );
    expect(
      replyCodesOf(
        '451 4.4.1 No MX host of the recipient domain could be reached: mx.acme-legal.com: connect ECONNREFUSED 192.0.2.7:25',
      ),
    ).toBe('451 4.4.1');
    expect(replyCodesOf(GMAIL)).toBe('421 4.7.28');
    expect(replyCodesOf(YAHOO)).toBe('421 4.7.0');
    expect(replyCodesOf('421 Service not available, acme-legal.com closing')).toBe('421');
    expect(replyCodesOf('421 4.7.0acme')).toBe('421');
    expect(replyCodesOf('connection refused by mx.acme-legal.com')).toBeNull();
  });
});
