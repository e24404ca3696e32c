import { describe, expect, it } from '@jest/globals';
import { reviewBroadcast, type ReviewInput } from './broadcast-review.ts';

const input: ReviewInput = {
  message: {
    fromHeader: 'Acme <news@example.com>',
    subject: 'Hi {{{contact.first_name|there}}}',
    replyTo: [],
    previewText: null,
    html: '<p>{{{contact.plan}}} {{{contact.nope}}} {{{contact.gone|x}}} <a href="{{{RESEND_UNSUBSCRIBE_URL}}}">Leave</a></p>',
    text: null,
  },
  refusal: null,
  sender: { ok: true, domain: 'example.com' },
  segment: { name: 'Everyone' },
  topic: 'none',
  properties: [{ id: 'p1', key: 'plan', type: 'string', fallback_value: null }],
  audience: { recipients: 2, suppressed: 1 },
};

const levels = (checks: ReturnType<typeof reviewBroadcast>) =>
  Object.fromEntries(checks.map((check) => [check.check, check.level]));

describe('reviewBroadcast', () => {
  it('passes a sendable broadcast, warning only of a placeholder no contact can fill', () => {
    const checks = reviewBroadcast(input);
    expect(levels(checks)).toEqual({
      from_domain: 'ok',
      subject: 'ok',
      content: 'ok',
      segment: 'ok',
      topic: 'ok',
      unsubscribe_link: 'ok',
      placeholders: 'warning',
      recipients: 'ok',
    });
    expect(checks.find((c) => c.check === 'placeholders')?.message).toContain('{{{contact.nope}}}');
    expect(checks.find((c) => c.check === 'placeholders')?.message).not.toContain('plan');
    expect(checks.find((c) => c.check === 'recipients')?.message).toBe(
      '2 contacts will receive it (after unsubscribes and topic opt-outs). 1 more is on your suppression list and will not be sent it.',
    );
  });

  it('blocks a broadcast without an unsubscribe link, subject, segment or a domain it may send from', () => {
    const checks = reviewBroadcast({
      ...input,
      message: { ...input.message, subject: ' ', html: '<p>News</p>', text: 'News' },
      sender: { ok: false, message: 'The example.com domain is not verified.' },
      segment: 'missing',
      topic: 'not_found',
    });
    expect(checks.filter((c) => c.level === 'error').map((c) => c.check)).toEqual([
      'from_domain',
      'subject',
      'segment',
      'topic',
      'unsubscribe_link',
    ]);
  });

  it('finds the link in the text part too, and warns when no contact will receive it', () => {
    const checks = reviewBroadcast({
      ...input,
      message: { ...input.message, html: '<p>News</p>', text: 'Leave: {{{POSTLINE_UNSUBSCRIBE_URL}}}' },
      audience: { recipients: 0, suppressed: 0 },
    });
    expect(levels(checks)).toMatchObject({ unsubscribe_link: 'ok', placeholders: 'ok', recipients: 'warning' });
  });

  it('turns each email insight into a check: a failed one warns', () => {
    const checks = reviewBroadcast({
      ...input,
      insights: [
        { id: 'dmarc_record', group: 'needs_attention', passed: false, title: 'DMARC', detail: 'None.' },
        { id: 'image_alt', group: 'could_improve', passed: true, title: 'Alt', detail: 'Fine.' },
      ],
    });
    expect(checks.slice(-2)).toEqual([
      { check: 'dmarc_record', level: 'warning', message: 'DMARC: None.' },
      { check: 'image_alt', level: 'ok', message: 'Alt: Fine.' },
    ]);
  });
});
