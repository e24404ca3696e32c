import { describe, expect, it } from '@jest/globals';
import { webhookDisabledEmail } from './webhook-notice.ts';

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
