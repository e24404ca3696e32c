// What accepting, scheduling and sending an email put in the outbox, in the transaction (or the statement)
// that changes the email.
import { timerMessage, type OutboxMessage } from '@postline/platform';
import type { PositionedRecipient } from '../db/emails.ts';
import type { EmailRow } from '../../db/schema.ts';
import { groupByDomain } from '../../message/index.ts';
import { emailEvent } from './email-events.ts';

/** The scheduler timer that sends a scheduled email. */
export function sendTimerKey(emailId: string): string {
  return `email-send:${emailId}`;
}

/**
 * What sending an email now causes: `email.sent` and one delivery command per domain group; nothing when no
 * recipient is left to send to (a topic kept the email from all of them).
 */
export function sendMessages(email: EmailRow, recipients: readonly PositionedRecipient[]): OutboxMessage[] {
  if (recipients.length === 0) return [];
  return [
    emailEvent('email.sent', email, email.to_addresses, {}),
    ...groupByDomain(recipients.map((recipient) => recipient.address)).map(
      (group): OutboxMessage => ({
        exchange: 'commands',
        type: 'sender.deliver',
        team_id: email.team_id,
        data: {
          email_id: email.id,
          domain: group.domain,
          recipients: group.positions.map((i) => (recipients[i] as PositionedRecipient).position),
          attempt: 1,
        },
      }),
    ),
  ];
}

/** `email.scheduled` and the timer that sends the email at `at` (set again by a reschedule). */
export function scheduleMessages(email: EmailRow, at: Date, announce = true): OutboxMessage[] {
  const timer = timerMessage(email.team_id, sendTimerKey(email.id), at, 'sender.send-scheduled', {
    email_id: email.id,
    scheduled_at: at.toISOString(),
  });
  return announce ? [emailEvent('email.scheduled', email, email.to_addresses, {}), timer] : [timer];
}
