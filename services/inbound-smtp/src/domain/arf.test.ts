import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { isComplaint, parseFeedbackReport } from './arf.ts';
import { findReport, parseMime } from './multipart-report.ts';

const reportOf = (name: string) => {
  const report = findReport(parseMime(readFileSync(new URL(`../../test/fixtures/${name}`, import.meta.url))));
  if (report?.kind !== 'feedback-report') throw new Error(`${name} holds no feedback report`);
  return parseFeedbackReport(report.fields);
};

describe('parseFeedbackReport', () => {
  it('reads a Yahoo report (version 0.1, Received-Date)', () => {
    expect(reportOf('yahoo-arf.eml')).toEqual({
      feedbackType: 'abuse',
      userAgent: 'Yahoo!-Mail-Feedback/2.0',
      version: '0.1',
      originalMailFrom: 'b.0190a6f48b4a700080000000000000a4.x.h4bp6dreg5@send.acme.test',
      originalRcptTo: ['frank.lee@yahoo.com'],
      arrivalDate: 'Tue, 24 Nov 2026 10:20:11 +0000',
      reportedDomains: ['acme.test'],
      sourceIp: null,
    });
  });

  it('reads a Microsoft JMRP report, which names neither the MAIL FROM nor the recipient', () => {
    expect(reportOf('microsoft-jmrp-arf.eml')).toEqual({
      feedbackType: 'abuse',
      userAgent: 'Hotmail FBL',
      version: '1',
      originalMailFrom: null,
      originalRcptTo: [],
      arrivalDate: 'Tue, 24 Nov 2026 11:40:19 -0800',
      reportedDomains: ['acme.test'],
      sourceIp: '198.51.100.7',
    });
  });

  it('reads the RFC 5965 example, several Original-Rcpt-To, and a report missing its required fields', () => {
    const rfc = parseFeedbackReport(
      [
        'Feedback-Type: Abuse',
        'User-Agent: SomeGenerator/1.0',
        'Version: 1',
        'Original-Mail-From: <somespammer@example.net>',
        'Original-Rcpt-To: <user@example.com>',
        'Original-Rcpt-To: <other@example.com>',
        'Arrival-Date: Thu, 8 Mar 2005 14:00:00 EDT',
        'Source-IP: 192.0.2.2',
        'Authentication-Results: mail.example.com; spf=fail smtp.mail=somespammer@example.com',
        'Reported-Domain: example.net',
        'Reported-Uri: http://example.net/earn_money.html',
      ].join('\r\n'),
    );
    expect(rfc).toMatchObject({
      feedbackType: 'abuse',
      originalMailFrom: 'somespammer@example.net',
      originalRcptTo: ['user@example.com', 'other@example.com'],
    });
    expect(parseFeedbackReport('User-Agent: x\r\nOriginal-Mail-From: not an address')).toMatchObject({
      feedbackType: null,
      version: null,
      originalMailFrom: null,
    });
  });
});

describe('isComplaint', () => {
  it.each([
    ['abuse', true],
    ['fraud', true],
    ['virus', true],
    ['other', true],
    ['x-unregistered', true],
    ['not-spam', false],
    ['auth-failure', false],
  ])('%s → %s', (type, complaint) => {
    expect(isComplaint(type)).toBe(complaint);
  });
});
