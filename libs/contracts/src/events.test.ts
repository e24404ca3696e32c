import { describe, expect, it } from '@jest/globals';
import {
  EmailBounced,
  EmailOpened,
  EmailSent,
  PUBLIC_EVENT_TYPES,
  PublicEventEnvelope,
  PublicEventType,
  publicEventBody,
  publicEvents,
} from './events.ts';

// The bounce example of Resend's webhook docs, offset timestamp and all.
const bounce = {
  broadcast_id: '8b146471-e88e-4322-86af-016cd36fd216',
  created_at: '2024-11-22T23:41:11.894719+00:00',
  email_id: '56761188-7520-42d8-8898-ff6fc54ce618',
  from: 'Acme <onboarding@example.com>',
  to: ['bounced@postline.test'],
  subject: 'Sending this example',
  template_id: '43f68331-0622-4e15-8202-246a0388854b',
  bounce: {
    diagnosticCode: ['smtp; 550 5.5.0 Requested action not taken: mailbox unavailable'],
    message: "The recipient's email provider sent a hard bounce message.",
    subType: 'Suppressed',
    type: 'Permanent',
  },
  tags: { category: 'confirm_email' },
};

const sent = {
  email_id: '0195f3a2-7c1e-7b3a-9d4e-2f6a8b0c1d2e',
  created_at: '2026-04-03T22:13:42.674Z',
  from: 'Acme <o@example.com>',
  to: ['a@example.org'],
  subject: 'Hello',
};

describe('public event payloads', () => {
  it('has exactly the 19 public event types, email events first, each with a schema', () => {
    expect(PUBLIC_EVENT_TYPES).toHaveLength(19);
    expect(PUBLIC_EVENT_TYPES[0]).toBe('email.scheduled');
    expect(PUBLIC_EVENT_TYPES[18]).toBe('suppression.removed');
    expect(Object.keys(publicEvents)).toEqual([...PUBLIC_EVENT_TYPES]);
  });

  it('parses the documented bounce payload', () => {
    const parsed = EmailBounced.parse(bounce);
    expect(parsed.bounce.type).toBe('Permanent');
    expect(parsed.tags).toEqual({ category: 'confirm_email' });
  });

  it('rejects a bounce without bounce.type or with an unknown subType', () => {
    const { type: _type, ...withoutType } = bounce.bounce;
    expect(EmailBounced.safeParse({ ...bounce, bounce: withoutType }).success).toBe(false);
    expect(EmailBounced.safeParse({ ...bounce, bounce: { ...bounce.bounce, subType: 'Other' } }).success).toBe(false);
  });

  it('rejects a payload missing a common field', () => {
    const { email_id: _id, ...withoutId } = sent;
    expect(EmailSent.safeParse(withoutId).success).toBe(false);
    expect(EmailSent.safeParse(sent).success).toBe(true);
  });

  it('takes tags only as an object map', () => {
    expect(EmailSent.safeParse({ ...sent, tags: { category: 'welcome' } }).success).toBe(true);
    expect(EmailSent.safeParse({ ...sent, tags: [{ name: 'category', value: 'welcome' }] }).success).toBe(false);
  });

  it('requires machine_open on email.opened', () => {
    expect(EmailOpened.safeParse(sent).success).toBe(false);
    expect(EmailOpened.parse({ ...sent, machine_open: true }).machine_open).toBe(true);
  });
});

describe('publicEventBody', () => {
  it('builds the webhook body with created_at in UTC with milliseconds', () => {
    const body = publicEventBody('email.sent', new Date(Date.UTC(2026, 3, 3, 22, 13, 42)), sent);
    expect(body).toEqual({ type: 'email.sent', created_at: '2026-04-03T22:13:42.000Z', data: sent });
    expect(PublicEventEnvelope.safeParse(body).success).toBe(true);
  });

  it('validates the envelope data against the schema of its type', () => {
    const body = publicEventBody('email.sent', new Date(), sent);
    expect(PublicEventEnvelope.safeParse({ ...body, type: 'email.bounced' }).success).toBe(false);
    expect(PublicEventEnvelope.safeParse({ ...body, type: 'email.unknown' }).success).toBe(false);
    expect(PublicEventEnvelope.safeParse({ ...body, created_at: '2026-04-03T22:13:42Z' }).success).toBe(false);
  });

  it('has an envelope for every public event type', () => {
    for (const type of PublicEventType.options) {
      const result = PublicEventEnvelope.safeParse({ type, created_at: '2026-04-03T22:13:42.674Z', data: {} });
      expect(result.success).toBe(false);
      expect(result.error?.issues.some((issue) => issue.path[0] === 'data')).toBe(true);
    }
  });
});
