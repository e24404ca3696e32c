import { describe, expect, it } from '@jest/globals';
import { CreateApiKeyBody, DmarcReportQuery, LogFilterQuery, ReplayWebhookEventsBody } from './requests.ts';

describe('the API’s timestamps', () => {
  it('take ISO 8601 with Z or an offset, the seconds and their fraction optional', () => {
    for (const since of [
      '2026-04-03T10:00Z',
      '2026-04-03T10:00+02:00',
      '2026-04-03T10:00:05Z',
      '2026-04-03T10:00:05.123-05:30',
    ]) {
      expect(ReplayWebhookEventsBody.safeParse({ since, status: 'failed' }).success).toBe(true);
    }
    expect(LogFilterQuery.safeParse({ created_after: '2026-04-03T10:00Z' }).success).toBe(true);
    expect(DmarcReportQuery.safeParse({ from: '2026-04-03T10:00Z', to: '2026-04-04' }).success).toBe(true);
    expect(CreateApiKeyBody.safeParse({ name: 'k', expires_at: '2030-01-01T00:00+01:00' }).success).toBe(true);
  });

  it('refuse a time without an offset, an impossible date or hour, and anything else', () => {
    for (const since of [
      '2026-04-03T10:00',
      '2026-04-03T10:00:05',
      '2026-02-30T10:00Z',
      '2026-04-03T24:00Z',
      '2026-04-03',
      'now',
    ]) {
      const parsed = ReplayWebhookEventsBody.safeParse({ since, status: 'failed' });
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.message).toBe('must be an ISO 8601 timestamp');
    }
  });
});
