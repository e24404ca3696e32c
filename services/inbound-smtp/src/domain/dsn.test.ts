import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { classifyDsnFailure, dsnFailureSuppresses, effectiveAction, parseDeliveryStatus } from './dsn.ts';
import { findReport, parseMime } from './multipart-report.ts';

const statusOf = (name: string) => {
  const report = findReport(parseMime(readFileSync(new URL(`../../test/fixtures/${name}`, import.meta.url))));
  if (report?.kind !== 'delivery-status') throw new Error(`${name} holds no delivery status`);
  return parseDeliveryStatus(report.fields);
};

describe('parseDeliveryStatus', () => {
  it('reads the per-message fields and each recipient group of a Postfix DSN', () => {
    expect(statusOf('postfix-failed.eml')).toEqual({
      reportingMta: 'mx.example.net',
      arrivalDate: 'Tue, 24 Nov 2026 10:14:58 +0000 (UTC)',
      originalEnvelopeId: null,
      recipients: [
        {
          finalRecipient: 'alice@example.net',
          originalRecipient: 'alice@example.net',
          action: 'failed',
          status: '5.1.1',
          diagnosticCode:
            'smtp; 550 5.1.1 <alice@example.net>: Recipient address rejected: User unknown in virtual mailbox table',
          remoteMta: 'mail.example.net',
        },
        {
          finalRecipient: 'bob@example.net',
          originalRecipient: 'Bob@Example.net',
          action: 'failed',
          status: '5.2.2',
          diagnosticCode: 'smtp; 552 5.2.2 <bob@example.net>: Mailbox full',
          remoteMta: 'mail.example.net',
        },
      ],
    });
  });

  it.each([
    ['postfix-delayed.eml', { finalRecipient: 'carol@example.net', action: 'delayed', status: '4.4.1' }],
    [
      'exim-failed.eml',
      { finalRecipient: 'dave@example.org', action: 'failed', status: '5.0.0', originalRecipient: null },
    ],
    ['gmail-failed.eml', { finalRecipient: 'nosuchuser.2026@gmail.com', action: 'failed', status: '5.1.1' }],
    [
      'outlook-failed.eml',
      { finalRecipient: 'erin@contoso.com', originalRecipient: 'erin@contoso.com', action: 'failed', status: '5.1.10' },
    ],
  ])('reads %s', (name, expected) => {
    const status = statusOf(name);
    expect(status.recipients).toHaveLength(1);
    expect(status.recipients[0]).toMatchObject(expected);
  });

  it('unfolds a multi-line Gmail diagnostic', () => {
    expect(statusOf('gmail-failed.eml').recipients[0]?.diagnosticCode).toMatch(
      /^smtp; 550-5\.1\.1 The email account that you tried to reach does not exist\. Please try 550-5\.1\.1 double-checking .* - gsmtp$/,
    );
  });

  it('reads a malformed group: no empty line after the per-message fields, no Action, an untyped address, a commented Status', () => {
    const status = statusOf('malformed-dsn.eml');
    expect(status.reportingMta).toBe('legacy.example.com');
    expect(status.recipients).toEqual([
      {
        finalRecipient: 'lena@legacy.example.com',
        originalRecipient: null,
        action: null,
        status: '5.1.1',
        diagnosticCode: 'smtp; 550 User unknown',
        remoteMta: null,
      },
    ]);
    expect(effectiveAction(status.recipients[0]!)).toBe('failed');
  });

  it('has no recipients for a part with none, and ignores an unknown Action and a malformed Status', () => {
    expect(parseDeliveryStatus('Reporting-MTA: dns; a.example\r\n').recipients).toEqual([]);
    const [odd] = parseDeliveryStatus(
      'Reporting-MTA: dns; a\r\n\r\nFinal-Recipient: rfc822; x@y.test\r\nAction: exploded\r\nStatus: 9.9.9\r\n',
    ).recipients;
    expect(odd).toMatchObject({ action: null, status: null });
    expect(effectiveAction(odd!)).toBeNull();
  });
});

describe('classifyDsnFailure', () => {
  it.each([
    ['5.1.1', 'smtp; 550 5.1.1 <a@b>: User unknown', 'Permanent', 'General'],
    [
      '5.1.10',
      'smtp;550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
      'Permanent',
      'NoEmail',
    ],
    ['5.1.2', null, 'Permanent', 'NoEmail'],
    ['5.2.2', 'smtp; 552 5.2.2 Mailbox full', 'Transient', 'MailboxFull'],
    ['5.3.4', 'smtp; 552 5.3.4 Message too big', 'Transient', 'MessageTooLarge'],
    ['5.7.1', 'smtp; 550 5.7.1 Message rejected as spam', 'Transient', 'ContentRejected'],
    ['5.7.1', 'smtp; 554 5.7.1 Attachment type not allowed', 'Transient', 'AttachmentRejected'],
    // Exim: the generic 5.0.0 gives way to what the reply says (a block list is not about the mailbox).
    [
      '5.0.0',
      'smtp; 550 rejected because 198.51.100.7 is in a black list at zen.spamhaus.org',
      'Transient',
      'ContentRejected',
    ],
    ['5.0.0', 'smtp; 550 5.1.1 No such user', 'Permanent', 'General'],
    ['5.0.0', null, 'Permanent', 'General'],
    // A failed delivery with a 4.x.x status: the MTA gave up retrying; transient, whatever the last reply.
    ['4.4.7', 'smtp; 550 5.1.1 gone', 'Transient', 'General'],
    ['4.4.1', 'X-Postfix; connect to mx.example.net[192.0.2.1]:25: Connection timed out', 'Transient', 'General'],
    [null, 'smtp; 550 Requested action not taken: mailbox unavailable', 'Permanent', 'General'],
    [null, 'smtp; 421 4.7.0 Try again later', 'Transient', 'General'],
    [null, 'X-Unknown; something went wrong', 'Undetermined', 'Undetermined'],
    [null, null, 'Undetermined', 'Undetermined'],
  ] as const)('Status %s, %s → %s/%s', (status, diagnostic, type, subType) => {
    const bounce = classifyDsnFailure(status, diagnostic);
    expect(bounce).toMatchObject({ type, subType, diagnosticCode: diagnostic ? [diagnostic] : [] });
    expect(bounce.message).toMatch(/^The recipient's mail system /);
  });
});

describe('dsnFailureSuppresses', () => {
  it.each([
    ['5.1.1', 'smtp; 550 5.1.1 <a@b>: User unknown', true],
    ['5.1.2', null, true],
    ['5.0.0', 'smtp; 550 5.1.1 No such user', true],
    // Failures about our sending or the message: permanent, but the address stays deliverable.
    ['5.1.7', 'smtp; 550 5.1.7 Invalid sender address', false],
    ['5.1.8', 'smtp; 553 5.1.8 Sender domain does not exist', false],
    ['5.7.1', 'smtp; 550 5.7.1 Message rejected as spam', false],
    ['5.4.6', null, false],
    ['5.2.2', 'smtp; 552 5.2.2 Mailbox full', false],
    ['4.4.7', 'smtp; 550 5.1.1 gone', false],
    [null, null, false],
  ] as const)('Status %s, %s → %s', (status, diagnostic, suppress) => {
    expect(dsnFailureSuppresses(status, diagnostic)).toBe(suppress);
  });
});
