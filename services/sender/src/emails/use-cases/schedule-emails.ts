// A scheduled email: moved to another time, canceled, or sent when its timer fires.
import type { Kysely, Transaction } from 'kysely';
import { enqueue, notFound, validationError } from '@postline/platform';
import { cancelEmail, lockEmail, markEmailQueued, pendingRecipients, setScheduledAt } from '../db/emails.ts';
import type { EmailRow, SenderDb } from '../../db/schema.ts';
import { parseScheduledAt, refusalError } from '../../message/index.ts';
import { scheduleMessages, sendMessages, sendTimerKey } from '../outbox/email-messages.ts';

export type ScheduleDeps = { db: Kysely<SenderDb>; now: () => Date };

/** Moves the team's scheduled email to `scheduledAt` (ISO 8601 or natural language, as on create). */
export async function rescheduleEmail(
  deps: ScheduleDeps,
  teamId: string,
  id: string,
  scheduledAt: string,
): Promise<void> {
  const parsed = parseScheduledAt(scheduledAt, deps.now());
  if (!parsed.ok) throw refusalError(parsed.refusal);
  const at = parsed.date;
  await deps.db.transaction().execute(async (trx) => {
    await lockScheduled(trx, teamId, id, 'rescheduled');
    const updated = await setScheduledAt(trx, id, at);
    await enqueue(trx, scheduleMessages(updated, at, false));
  });
}

/** Cancels the team's scheduled email and the timer that would send it. */
export async function cancelScheduledEmail(deps: ScheduleDeps, teamId: string, id: string): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await lockScheduled(trx, teamId, id, 'canceled');
    await cancelEmail(trx, id);
    await enqueue(trx, [
      { exchange: 'commands', type: 'scheduler.cancel-timer', team_id: teamId, data: { key: sendTimerKey(id) } },
    ]);
  });
}

/**
 * A scheduled email's timer fired: it is sent now (email.sent and its delivery commands) unless it was
 * canceled, already sent, or rescheduled to another time than `scheduledAt` (that time's timer sends it).
 */
export async function sendScheduledEmail(
  trx: Transaction<SenderDb>,
  teamId: string,
  emailId: string,
  scheduledAt: string,
): Promise<void> {
  const email = await lockEmail(trx, teamId, emailId);
  if (!email || email.status !== 'scheduled') return;
  if (email.scheduled_at?.getTime() !== new Date(scheduledAt).getTime()) return;
  const updated = await markEmailQueued(trx, email.id);
  await enqueue(trx, sendMessages(updated, await pendingRecipients(trx, email.id)));
}

/** Row-locks the team's email, which must still be scheduled to be `done` to (else 404, or 403 naming its state). */
async function lockScheduled(
  trx: Transaction<SenderDb>,
  teamId: string,
  id: string,
  done: 'rescheduled' | 'canceled',
): Promise<EmailRow> {
  const email = await lockEmail(trx, teamId, id);
  if (!email) throw notFound('Email not found');
  if (email.status !== 'scheduled')
    throw validationError(`Only a scheduled email can be ${done}; this email is ${email.last_event}.`, 403);
  return email;
}
