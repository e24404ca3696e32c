// One outcome at a time, for what a batch statement cannot take: a busy wait, a skip, a replay, or a second
// outcome for one event (a duplicate command). The other ways in call it, inside their transaction.
import type { Transaction } from 'kysely';
import { enqueue, enqueueCommand } from '@postline/platform';
import { failUnfinishedEvent, insertAttempt, lockEvent, postponeFirstAttempt, updateEvent } from '../db/events.ts';
import type { DispatcherDb, EventRow } from '../db/schema.ts';
import { newAttemptId } from '../domain/ids.ts';
import {
  attemptTimerKey,
  deliveryTimer,
  followUpScheduled,
  nowOf,
  randomOf,
  settleScheduled,
  trackEndpoint,
  type CommandOutcome,
  type RecordingDeps,
  type Uncounted,
} from './attempt-records.ts';

/** How long a delivery waits when its endpoint already has `perEndpoint` deliveries in flight (and as many waiting). */
const BUSY_WAIT_MS = 500;

/** Records one outcome in the caller's transaction; what it attempted is added to `uncounted`. */
export async function recordSingleOutcome(
  deps: RecordingDeps,
  trx: Transaction<DispatcherDb>,
  { command, teamId, outcome }: CommandOutcome,
  uncounted: Uncounted,
): Promise<void> {
  if (outcome.kind === 'busy') {
    const due = new Date(nowOf(deps).getTime() + BUSY_WAIT_MS * (1 + randomOf(deps)));
    await enqueue(trx, [deliveryTimer(teamId, command, due)]);
    if (command.attempt === 1 && !command.replay) await postponeFirstAttempt(trx, command.event_id, due);
    return;
  }
  if (outcome.kind === 'skip') {
    // Retries of an endpoint that got disabled stop here; the event stays replayable.
    if (outcome.why === 'disabled' && !command.replay) await failUnfinishedEvent(trx, command.event_id);
    return;
  }
  // A scheduled attempt is recorded as in a batch (one statement moves the event and records the attempt).
  if (!command.replay) {
    const recorded = await settleScheduled(deps, trx, [{ command, teamId, outcome }], uncounted);
    return followUpScheduled(deps, trx, recorded);
  }
  const { result, sentAt } = outcome;
  const event = await lockEvent(trx, command.event_id);
  if (!event) return;
  await insertAttempt(trx, {
    id: newAttemptId(),
    event_id: event.id,
    endpoint_id: event.endpoint_id,
    attempt: null,
    replay: true,
    sent_at: sentAt,
    http_status_code: result.status,
    response: result.body,
    error: result.error ?? null,
    duration_ms: Math.round(result.durationMs),
  });
  uncounted.push({ replay: true, result });
  await afterReplay(trx, event, result.ok);
  if (!result.ok || outcome.endpointFailing) await trackEndpoint(deps, trx, event.endpoint_id, result.ok, sentAt);
}

/** A replay never moves the schedule; a successful one settles an event that was still failing. */
async function afterReplay(trx: Transaction<DispatcherDb>, event: EventRow, ok: boolean): Promise<void> {
  if (!ok || event.status === 'success') return;
  await updateEvent(trx, event.id, { status: 'success', next_attempt_at: null, failure_reason: null });
  if (event.status === 'attempting' || event.status === 'pending') {
    await enqueueCommand(trx, 'scheduler.cancel-timer', event.team_id, { key: attemptTimerKey(event.id) });
  }
}
