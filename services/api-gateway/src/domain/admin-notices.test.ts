import { describe, expect, it } from '@jest/globals';
import { reputationPausedEmail, webhookDisabledEmail } from './admin-notices.ts';

describe('webhookDisabledEmail', () => {
  it('names the endpoint, the team, why and since when, and links to the endpoint’s page', () => {
    const { subject, text } = webhookDisabledEmail({
      event: {
        webhook_id: '0195f3a2-7c1e-7b3a-9d4e-2f6a8b0c1d2e',
        endpoint: 'https://hooks.acme.example/postline',
        reason: 'every delivery failed for 5 days',
        failing_since: '2026-11-22T10:00:00.000Z',
        disabled_at: '2026-11-27T10:05:30.000Z',
      },
      team: 'Acme',
      name: 'Ada',
      publicBaseUrl: 'https://postline.example.com/',
    });
    expect(subject).toBe('Webhook endpoint disabled: https://hooks.acme.example/postline');
    expect(text).toContain('Hello Ada,');
    expect(text).toContain(
      'Postline disabled the webhook endpoint https://hooks.acme.example/postline of the team Acme at ' +
        '2026-11-27 10:05 UTC: every delivery failed for 5 days (failing since 2026-11-22 10:00 UTC).',
    );
    expect(text).toContain('\nhttps://postline.example.com/dashboard/webhooks/0195f3a2-7c1e-7b3a-9d4e-2f6a8b0c1d2e\n');
  });
});

describe('reputationPausedEmail', () => {
  const event = {
    scope: 'team' as const,
    domain_id: null,
    domain: null,
    reason: 'bounce_rate' as const,
    sends: 10_000,
    bounce_rate: 0.0412,
    complaint_rate: 0.0001,
    thresholds: { bounce_rate: 0.04, complaint_rate: 0.0008, window: 10_000, min_sends: 2_500 },
    paused_at: '2026-11-27T10:05:30.000Z',
  };
  const who = { team: 'Acme', name: 'Ada', publicBaseUrl: 'https://postline.example.com/' };

  it('names the rate that crossed its line, over how many sends, and where an admin resumes', () => {
    const { subject, text } = reputationPausedEmail({ event, ...who });
    expect(subject).toBe('Sending paused for Acme: bounce rate 4.12%');
    expect(text).toContain(
      'Postline paused sending for the team Acme at 2026-11-27 10:05 UTC: its bounce rate over the last 10000 ' +
        'sends is 4.12%, above the line of 4.00%.',
    );
    expect(text).toContain('\nhttps://postline.example.com/dashboard/\n');
  });

  it('names the domain and the complaint rate when one domain is paused for complaints', () => {
    const { subject, text } = reputationPausedEmail({
      event: {
        ...event,
        scope: 'domain',
        domain_id: '0195f3a2-7c1e-7b3a-9d4e-2f6a8b0c1d2e',
        domain: 'news.acme.example',
        reason: 'complaint_rate',
        complaint_rate: 0.0012,
      },
      ...who,
    });
    expect(subject).toBe('Sending paused for news.acme.example: complaint rate 0.12%');
    expect(text).toContain('Postline paused sending from news.acme.example for the team Acme');
    expect(text).toContain('above the line of 0.08%');
  });
});
