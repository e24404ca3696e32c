// The `data` of a test event (POST /webhooks/{id}/test): a sample of each of the 19 public events, in the
// shape its endpoint receives for real ones (the contracts' event schemas), with values that say it is a test.
import { randomUUID } from 'node:crypto';
import type { PublicEventType } from '@postline/contracts';

const TEST_FROM = 'Postline <test@example.com>';
const TEST_TO = 'recipient@example.com';

/** A sample event's data, made at `at`; fresh ids every time. */
export function sampleEventData(type: PublicEventType, at: Date): Record<string, unknown> {
  const created_at = at.toISOString();
  const email = {
    email_id: randomUUID(),
    created_at,
    from: TEST_FROM,
    to: [TEST_TO],
    subject: 'Postline test event',
    tags: { postline_test: 'true' },
  };
  const contact = {
    id: randomUUID(),
    segment_ids: [],
    created_at,
    updated_at: created_at,
    email: TEST_TO,
    first_name: 'Test',
    last_name: 'Contact',
    unsubscribed: false,
  };
  const domain = {
    id: randomUUID(),
    name: 'example.com',
    status: 'verified',
    created_at,
    region: 'us-east-1',
    capabilities: { sending: 'enabled', receiving: 'disabled' },
    records: [
      {
        record: 'SPF',
        name: 'send',
        type: 'TXT',
        value: '"v=spf1 include:example.com ~all"',
        ttl: 'Auto',
        status: 'verified',
      },
    ],
  };
  const suppression = { id: randomUUID(), email: TEST_TO, origin: 'manual', source_id: null, created_at };
  switch (type) {
    case 'email.scheduled':
    case 'email.sent':
    case 'email.delivered':
    case 'email.complained':
      return email;
    case 'email.delivery_delayed':
      return { ...email, delivery_delayed: { message: 'The recipient’s server answered 451 (a test).' } };
    case 'email.bounced':
      return {
        ...email,
        bounce: {
          message: 'The recipient’s mailbox does not exist (a test).',
          subType: 'General',
          type: 'Permanent',
          diagnosticCode: ['smtp; 550 5.1.1 user unknown'],
        },
      };
    case 'email.opened':
      return { ...email, machine_open: false };
    case 'email.clicked':
      return {
        ...email,
        click: {
          ipAddress: '192.0.2.1',
          link: 'https://example.com/',
          timestamp: created_at,
          userAgent: 'Mozilla/5.0',
        },
      };
    case 'email.suppressed':
      return {
        ...email,
        suppressed: {
          message: 'The address is on the suppression list (a test).',
          type: 'OnAccountSuppressionList',
          reason: 'previous_bounce',
        },
      };
    case 'email.failed':
      return { ...email, failed: { reason: 'test_event' } };
    case 'email.received':
      return {
        email_id: randomUUID(),
        created_at,
        from: 'sender@example.com',
        to: [TEST_TO],
        bcc: [],
        cc: [],
        received_for: [TEST_TO],
        message_id: `<${randomUUID()}@example.com>`,
        subject: 'Postline test event',
        attachments: [],
      };
    case 'contact.created':
    case 'contact.updated':
    case 'contact.deleted':
      return contact;
    case 'domain.created':
    case 'domain.updated':
    case 'domain.deleted':
      return domain;
    case 'suppression.added':
    case 'suppression.removed':
      return suppression;
  }
}
