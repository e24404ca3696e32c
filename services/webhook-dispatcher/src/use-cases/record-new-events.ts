// The records of new events, written by the fan-out's consumer in its transaction: an event whose first
// attempt is over is written settled, with that attempt, its retry timer and its endpoint's failure streak.
import type { Transaction } from 'kysely';
import { insertEvents } from '../db/events.ts';
import type { DispatcherDb } from '../db/schema.ts';
import { newAttemptId } from '../domain/ids.ts';
import {
  attemptMadeOf,
  countAfterCommit,
  followUpScheduled,
  planAfterAttempt,
  type NewRecord,
  type RecordedAttempt,
  type RecordingDeps,
} from './attempt-records.ts';

/**
 * Writes the records of new events in the caller's transaction, one statement for all. A record that exists
 * already writes nothing. Returns the ids of the records written and what to run once the transaction has
 * committed (the metrics).
 */
export async function recordNewEvents(
  deps: RecordingDeps,
  trx: Transaction<DispatcherDb>,
  records: NewRecord[],
): Promise<{ created: Set<string>; afterCommit: () => void }> {
  const rows = records.map((record) => {
    const attemptMade = attemptMadeOf(record);
    return {
      event: record.target.event,
      attemptMade,
      plan: attemptMade && planAfterAttempt(deps, 1, attemptMade.result.ok, attemptMade.sentAt),
    };
  });
  const created = new Set(
    await insertEvents(
      trx,
      rows.map(({ event, attemptMade, plan }) => ({
        id: event.id,
        endpoint_id: event.endpoint_id,
        team_id: event.team_id,
        source_event_id: event.source_event_id,
        type: event.type,
        body: event.body,
        status: plan?.status ?? event.status,
        attempts_made: plan ? 1 : 0,
        next_attempt_at: plan ? plan.next : event.status === 'failed' ? null : new Date(),
        failure_reason: event.status === 'failed' ? 'endpoint_disabled' : null,
        attempt: attemptMade && {
          id: newAttemptId(),
          sent_at: attemptMade.sentAt,
          http_status_code: attemptMade.result.status,
          response: attemptMade.result.body,
          error: attemptMade.result.error ?? null,
          duration_ms: Math.round(attemptMade.result.durationMs),
        },
      })),
    ),
  );
  const settled: RecordedAttempt[] = rows.flatMap(({ event, attemptMade, plan }) =>
    attemptMade && plan && created.has(event.id) ? [{ event, attempt: 1, next: plan.next, outcome: attemptMade }] : [],
  );
  await followUpScheduled(deps, trx, settled);
  return {
    created,
    afterCommit: countAfterCommit(
      deps,
      settled.map(({ outcome }) => ({ replay: false, result: outcome.result })),
    ),
  };
}
