import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { decideReturnPathMail, readReturnPathMail, type ReturnPathRecipient } from './return-path-report.ts';

const KEY = 'fixture-verp-key';
const RETURN_PATH = 'send.acme.test';
const TEAM = '0190a6f4-8b4a-7000-8000-00000000beef';
/** The fixtures' VERP addresses, tagged with KEY: email …a1 recipient 0, …a2 the email only, …a3 recipient 2, …a4 the email only. */
const V0 = 'b.0190a6f48b4a700080000000000000a1.0.r34l57ry44@send.acme.test';
const VX = 'b.0190a6f48b4a700080000000000000a2.x.pdhsy5rwie@send.acme.test';
const V2 = 'b.0190a6f48b4a700080000000000000a3.2.xnps2qvcs5@send.acme.test';
const VX4 = 'b.0190a6f48b4a700080000000000000a4.x.h4bp6dreg5@send.acme.test';
/** Tagged with KEY too, at another team's return path. */
const OTHER_TEAM_VERP = 'b.0190a6f48b4a700080000000000000a5.1.vhw7qei2vm@send.other.test';
const EMAIL = (n: number) => `0190a6f4-8b4a-7000-8000-0000000000a${n}`;

const fixture = (name: string) => readFileSync(new URL(`../../test/fixtures/${name}`, import.meta.url));
const crlf = (raw: Buffer) => Buffer.from(raw.toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1');
const to = (address: string): ReturnPathRecipient => ({ address, teamId: TEAM, returnPath: RETURN_PATH });

function decide(
  raw: Buffer,
  rcpt: string,
  options: { key?: string; teamReturnPaths?: string[]; envelopeFrom?: string } = {},
) {
  return decideReturnPathMail(readReturnPathMail(raw), to(rcpt), {
    verpKey: options.key ?? KEY,
    teamReturnPaths: new Set(options.teamReturnPaths ?? []),
    envelopeFrom: options.envelopeFrom ?? '',
  });
}

const bounce = (type: string, subType: string) => expect.objectContaining({ type, subType });

describe('every fixture, with LF and with CRLF line ends', () => {
  it.each([
    [
      'postfix-failed.eml',
      VX,
      'bounce',
      2,
      [
        { recipient: 'alice@example.net', kind: 'bounce', bounce: bounce('Permanent', 'General'), suppress: true },
        { recipient: 'Bob@Example.net', kind: 'bounce', bounce: bounce('Transient', 'MailboxFull'), suppress: false },
      ],
    ],
    ['postfix-delayed.eml', V0, 'delayed', 1, []],
    [
      'exim-failed.eml',
      V2,
      'bounce',
      3,
      [{ recipient_position: 2, kind: 'bounce', bounce: bounce('Transient', 'ContentRejected'), suppress: false }],
    ],
    [
      'gmail-failed.eml',
      V0,
      'bounce',
      1,
      [{ recipient_position: 0, kind: 'bounce', bounce: bounce('Permanent', 'General'), suppress: true }],
    ],
    [
      'outlook-failed.eml',
      VX4,
      'bounce',
      4,
      [{ recipient: 'erin@contoso.com', kind: 'bounce', bounce: bounce('Permanent', 'NoEmail'), suppress: true }],
    ],
    // Feedback loops send to the address they are enrolled with: the VERP address is inside the report.
    [
      'yahoo-arf.eml',
      'abuse@send.acme.test',
      'complaint',
      4,
      [{ recipient: 'frank.lee@yahoo.com', kind: 'complaint', feedback_type: 'abuse' }],
    ],
    [
      'microsoft-jmrp-arf.eml',
      'postmaster@send.acme.test',
      'complaint',
      3,
      [{ recipient_position: 2, kind: 'complaint', feedback_type: 'abuse' }],
    ],
    ['not-spam-arf.eml', V0, 'ignored', 1, []],
    [
      'qmail-failed.eml',
      VX,
      'bounce',
      2,
      [
        { recipient: 'henry@example.com', kind: 'bounce', bounce: bounce('Permanent', 'General'), suppress: true },
        { recipient: 'ivy@nohost.example.com', kind: 'bounce', bounce: bounce('Permanent', 'NoEmail'), suppress: true },
        // A routing loop (5.4.6) is no fault of the address: it bounces without joining the suppression list.
        { recipient: 'jack@example.com', kind: 'bounce', bounce: bounce('Permanent', 'General'), suppress: false },
      ],
    ],
    ['auto-reply.eml', V0, 'ignored', 1, []],
    [
      'malformed-dsn.eml',
      V0,
      'bounce',
      1,
      [{ recipient_position: 0, kind: 'bounce', bounce: bounce('Permanent', 'General'), suppress: true }],
    ],
    // A report whose parts were lost: a bounce by its subject, but the VERP address names no recipient.
    ['truncated-report.eml', VX4, 'unmatched', 4, []],
  ] as const)('%s to %s → %s', (name, rcpt, outcome, email, feedback) => {
    for (const raw of [fixture(name), crlf(fixture(name))]) {
      const decision = decide(raw, rcpt);
      expect(decision).toMatchObject({ outcome, emailId: EMAIL(email), unsubscribe: undefined });
      expect(decision.feedback).toEqual(feedback.map((item) => ({ email_id: EMAIL(email), ...item })));
    }
  });

  it('unsubscribe-request.eml → unsubscribe with the token of its (encoded) subject', () => {
    const decision = decide(fixture('unsubscribe-request.eml'), 'unsubscribe@send.acme.test', {
      envelopeFrom: 'mia@example.com',
    });
    expect(decision).toEqual({
      outcome: 'unsubscribe',
      emailId: null,
      feedback: [],
      unsubscribe: {
        token: 'AZBxpvSLSnAAgAAAAAAAAAGAZBxpvSLSnAAgAAAAAAAAAJAZBxpvSLSnAAgAAAAAAAAAM.c2lnbmF0dXJlLXRhZy0xMjM0',
        from: 'mia@example.com',
      },
      detail: 'unsubscribe request',
    });
  });
});

describe('matching by the VERP address', () => {
  it('drops a report whose VERP tag does not verify, or that was tagged with another key: forged', () => {
    const edited = VX.replace('.x.', '.0.');
    expect(decide(fixture('postfix-failed.eml'), edited)).toMatchObject({
      outcome: 'forged',
      emailId: null,
      feedback: [],
    });
    expect(decide(fixture('postfix-failed.eml'), VX, { key: 'another-deployment' })).toMatchObject({
      outcome: 'forged',
      feedback: [],
    });
  });

  it("drops a report whose VERP address is at another team's return path: forged, unless it is the team's", () => {
    const raw = Buffer.from(
      fixture('yahoo-arf.eml')
        .toString('latin1')
        .replace(`Original-Mail-From: <${VX4}>`, `Original-Mail-From: <${OTHER_TEAM_VERP}>`),
      'latin1',
    );
    expect(decide(raw, 'abuse@send.acme.test')).toMatchObject({ outcome: 'forged', feedback: [] });
    expect(decide(raw, 'abuse@send.acme.test', { teamReturnPaths: ['send.other.test'] })).toMatchObject({
      outcome: 'complaint',
      feedback: [{ email_id: EMAIL(5), recipient_position: 1, kind: 'complaint', feedback_type: 'abuse' }],
    });
  });

  it('takes the RCPT first, then Original-Mail-From, then the original Return-Path', () => {
    // The RCPT names recipient 0 of email a1; the report inside names email a4.
    const yahoo = decide(fixture('yahoo-arf.eml'), V0);
    expect(yahoo.feedback).toEqual([
      { email_id: EMAIL(1), recipient_position: 0, kind: 'complaint', feedback_type: 'abuse' },
    ]);
    // Without Original-Mail-From, the original's Return-Path (email a4).
    const noMailFrom = Buffer.from(
      fixture('yahoo-arf.eml')
        .toString('latin1')
        .replace(/^Original-Mail-From: .*\n/m, ''),
      'latin1',
    );
    expect(decide(noMailFrom, 'abuse@send.acme.test').emailId).toBe(EMAIL(4));
  });

  it('drops a report with no VERP address anywhere: unmatched', () => {
    const raw = Buffer.from(
      fixture('microsoft-jmrp-arf.eml')
        .toString('latin1')
        .replace(`Return-Path: <${V2}>`, 'Return-Path: <bounces@elsewhere.example>'),
      'latin1',
    );
    expect(decide(raw, 'postmaster@send.acme.test')).toMatchObject({
      outcome: 'unmatched',
      emailId: null,
      feedback: [],
    });
    expect(decide(Buffer.from('Subject: hello\r\n\r\nhi'), 'abuse@send.acme.test')).toMatchObject({
      outcome: 'unmatched',
    });
  });
});

describe('what is not acted on', () => {
  it('a complaint whose recipient is redacted everywhere and whose VERP address names none: unmatched', () => {
    const raw = Buffer.from(
      fixture('yahoo-arf.eml')
        .toString('latin1')
        .replace(/^Original-Rcpt-To: .*\n/m, ''),
      'latin1',
    );
    // The original's To is redacted@yahoo.com: a single address, tried (the sender matches it to no recipient).
    expect(decide(raw, 'abuse@send.acme.test').feedback).toEqual([
      { email_id: EMAIL(4), recipient: 'redacted@yahoo.com', kind: 'complaint', feedback_type: 'abuse' },
    ]);
    const noTo = Buffer.from(
      raw.toString('latin1').replace('To: redacted@yahoo.com\n', 'To: undisclosed-recipients:;\n'),
      'latin1',
    );
    expect(decide(noTo, 'abuse@send.acme.test')).toMatchObject({
      outcome: 'unmatched',
      emailId: EMAIL(4),
      feedback: [],
    });
  });

  it('an auth-failure report, and a feedback report without Feedback-Type: ignored', () => {
    const authFailure = Buffer.from(
      fixture('not-spam-arf.eml').toString('latin1').replace('Feedback-Type: not-spam', 'Feedback-Type: auth-failure'),
      'latin1',
    );
    expect(decide(authFailure, V0)).toMatchObject({ outcome: 'ignored', detail: 'feedback type auth-failure' });
    const untyped = Buffer.from(
      fixture('not-spam-arf.eml').toString('latin1').replace('Feedback-Type: not-spam\n', ''),
      'latin1',
    );
    expect(decide(untyped, V0)).toMatchObject({ outcome: 'ignored', feedback: [] });
  });

  it('a DSN whose recipients were all delivered or relayed: ignored', () => {
    const relayed = Buffer.from(
      fixture('postfix-delayed.eml').toString('latin1').replace('Action: delayed', 'Action: relayed'),
      'latin1',
    );
    expect(decide(relayed, V0)).toMatchObject({ outcome: 'ignored', feedback: [] });
  });

  it('a DSN that both delays and fails recipients: a bounce of the failed ones only', () => {
    const raw = Buffer.from(
      fixture('postfix-failed.eml')
        .toString('latin1')
        .replace('Action: failed\nStatus: 5.2.2', 'Action: delayed\nStatus: 4.2.2'),
      'latin1',
    );
    expect(decide(raw, VX).feedback.map((item) => item.recipient)).toEqual(['alice@example.net']);
  });

  it('one message for a position named by several failed recipients', () => {
    expect(decide(fixture('postfix-failed.eml'), V0).feedback).toEqual([
      {
        email_id: EMAIL(1),
        recipient_position: 0,
        kind: 'bounce',
        bounce: bounce('Permanent', 'General'),
        suppress: true,
      },
    ]);
  });

  it('an unsubscribe mail without a token: ignored', () => {
    expect(decide(Buffer.from('Subject: please stop\r\n\r\n'), 'unsubscribe@send.acme.test')).toMatchObject({
      outcome: 'ignored',
      unsubscribe: undefined,
    });
  });

  it('binary garbage to a VERP address: ignored, never a throw', () => {
    const garbage = Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 31) % 256));
    expect(decide(garbage, V0)).toMatchObject({ outcome: 'ignored', emailId: EMAIL(1) });
  });
});

describe('readReturnPathMail', () => {
  it('keeps a bounded excerpt: the report fields, not the message', () => {
    const read = readReturnPathMail(fixture('gmail-failed.eml'));
    expect(read.excerpt).toMatch(/^Reporting-MTA: dns; googlemail.com/);
    expect(read.excerpt).not.toContain('Thanks for your order');
    const big = readReturnPathMail(
      Buffer.from(`Subject: failure notice\r\nFrom: MAILER-DAEMON@x.test\r\n\r\n${'x'.repeat(100_000)}`),
    );
    expect(big.excerpt.length).toBe(2000);
  });
});
