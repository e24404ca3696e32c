// What the ways of recording delivery attempts share: the types they take, and the steps every recorded
// attempt goes through (the event's next state and the attempt in one statement, the next retry's timer,
// the endpoint's failure streak, the metrics once committed). The ways in are one file each:
// record-command-outcomes.ts (the deliver consumer's outcomes, in its transaction), record-first-attempts.ts
// (outcomes of in-process first attempts, in batches of their own), record-new-events.ts (first attempts
// over before their event's record was written, written with it) and record-single-outcome.ts (inside the
// others, one outcome at a time for what a batch statement cannot take).
import type { Kysely, Transaction } from 'kysely';
import type { DeliverWebhook } from '@postline/contracts';
import { enqueue, newId, timerMessage, type Logger, type OutboxMessage } from '@postline/platform';
import { lockEndpoint, updateEndpoint } from '../db/endpoints.ts';
import { recordScheduledAttempts, type DeliveryTarget } from '../db/events.ts';
import type { DispatcherDb, EventRow } from '../db/schema.ts';
import { newAttemptId } from '../domain/ids.ts';
import { MAX_ATTEMPTS, retryDelayMs, shouldDisable } from '../domain/schedule.ts';
import type { DeliveryMetrics } from '../metrics.ts';
import type { PostResult } from '../webhook-http/http-client.ts';
import type { AttemptMade, AttemptOutcome } from './attempt-delivery.ts';

export type RecordingDeps = {
  db: Kysely<DispatcherDb>;
  logger: Logger;
  /** POSTLINE_DELAY_SCALE. */
  scale: number;
  metrics: DeliveryMetrics;
  random?: () => number;
  now?: () => Date;
};

/** What one delivery command (or in-process first attempt) needs recorded once its POST is over. */
export type CommandOutcome = { command: DeliverWebhook; teamId: string; outcome: AttemptOutcome };

/** A first attempt made in process, started before its event's record is written. */
export type FirstAttempt = {
  /** Its outcome once the POST is over (or it waited too long for a slot); undefined if it failed to run. */
  readonly outcome: Promise<AttemptOutcome | undefined>;
  /** The outcome, once there is one. */
  settled?: AttemptOutcome;
};

/**
 * The record of an event not written yet (its target: the event, with what its record needs besides, and
 * its endpoint), with its first attempt when one was started beforehand.
 */
export type NewRecord = {
  target: DeliveryTarget & { event: Pick<EventRow, 'source_event_id' | 'type'> };
  first?: FirstAttempt;
};

/** The first outcome of an event's scheduled (not replayed) attempt. */
export type ScheduledOutcome = CommandOutcome & { outcome: AttemptMade };

/** A scheduled attempt recorded, with its event and when the next one is due (null: none). */
export type RecordedAttempt = {
  event: Pick<EventRow, 'id' | 'endpoint_id' | 'team_id'>;
  attempt: number;
  next: Date | null;
  outcome: AttemptMade;
};

/**
 * Attempts whose outcomes a transaction records. They are counted in the metrics once it has committed,
 * since a failed batch is recorded again one outcome at a time.
 */
export type Uncounted = { replay: boolean; result: PostResult }[];

/** The attempt a new record is written with: its first attempt, when that is over and was made. */
export function attemptMadeOf(record: NewRecord): AttemptMade | undefined {
  return record.first?.settled?.kind === 'attempted' ? record.first.settled : undefined;
}

export function nowOf(deps: RecordingDeps): Date {
  return deps.now?.() ?? new Date();
}

export function randomOf(deps: RecordingDeps): number {
  return (deps.random ?? Math.random)();
}

/** What to run once the transaction that recorded `uncounted` has committed: count them. */
export function countAfterCommit(deps: RecordingDeps, uncounted: Uncounted): () => void {
  return () => {
    for (const { replay, result } of uncounted) {
      const outcome = result.ok ? 'success' : 'failure';
      deps.metrics.deliveries.inc({ outcome: replay ? `replay_${outcome}` : outcome });
      deps.metrics.attemptDuration.observe({ outcome }, result.durationMs / 1000);
    }
  };
}

/** The first outcome of each event's scheduled attempt, apart from the rest (replays, busy, skips, twins). */
export function splitScheduled(outcomes: CommandOutcome[]): {
  scheduled: ScheduledOutcome[];
  others: CommandOutcome[];
} {
  const scheduled: ScheduledOutcome[] = [];
  const others: CommandOutcome[] = [];
  const seen = new Set<string>();
  for (const item of outcomes) {
    if (item.outcome.kind === 'attempted' && !item.command.replay && !seen.has(item.command.event_id)) {
      seen.add(item.command.event_id);
      scheduled.push({ ...item, outcome: item.outcome });
    } else {
      others.push(item);
    }
  }
  return { scheduled, others };
}

/**
 * Settles the events of scheduled attempts and records the attempts, in one statement (atomic on its own);
 * returns those recorded.
 */
export async function settleScheduled(
  deps: RecordingDeps,
  db: Kysely<DispatcherDb>,
  scheduled: ScheduledOutcome[],
  uncounted: Uncounted,
): Promise<RecordedAttempt[]> {
  const plans = scheduled.map((item) => ({
    ...item,
    ...planAfterAttempt(deps, item.command.attempt ?? 1, item.outcome.result.ok, item.outcome.sentAt),
  }));
  const moved = await recordScheduledAttempts(
    db,
    plans.map(({ command, attempt, status, next, outcome: { result, sentAt } }) => ({
      event_id: command.event_id,
      attempt,
      status,
      next_attempt_at: next,
      attempt_id: newAttemptId(),
      sent_at: sentAt,
      http_status_code: result.status,
      response: result.body,
      error: result.error ?? null,
      duration_ms: Math.round(result.durationMs),
    })),
  );
  const movedById = new Map(moved.map((row) => [row.id, row]));
  // Gone, or a duplicate command whose twin already recorded this attempt: nothing was recorded.
  const recorded = plans.flatMap((plan) => {
    const event = movedById.get(plan.command.event_id);
    return event ? [{ ...plan, event }] : [];
  });
  for (const { outcome } of recorded) uncounted.push({ replay: false, result: outcome.result });
  return recorded;
}

/** After recorded scheduled attempts: the next retry's timer of each failed one, and the endpoints' failure streaks. */
export async function followUpScheduled(
  deps: RecordingDeps,
  trx: Transaction<DispatcherDb>,
  recorded: RecordedAttempt[],
): Promise<void> {
  await enqueue(
    trx,
    recorded.flatMap(({ event, attempt, next }) =>
      next ? [deliveryTimer(event.team_id, { event_id: event.id, attempt: attempt + 1, replay: false }, next)] : [],
    ),
  );
  // Endpoint rows are locked in id order, so two batches cannot deadlock on them.
  const tracked = recorded.filter(({ outcome }) => !outcome.result.ok || outcome.endpointFailing);
  tracked.sort((a, b) =>
    a.event.endpoint_id < b.event.endpoint_id ? -1 : a.event.endpoint_id > b.event.endpoint_id ? 1 : 0,
  );
  for (const { event, outcome } of tracked)
    await trackEndpoint(deps, trx, event.endpoint_id, outcome.result.ok, outcome.sentAt);
}

/** The event's state after scheduled attempt `attempt`: success, the next retry's time, or failed after the eighth. */
export function planAfterAttempt(
  deps: RecordingDeps,
  attempt: number,
  ok: boolean,
  sentAt: Date,
): { attempt: number; status: EventRow['status']; next: Date | null } {
  const delay = ok ? undefined : retryDelayMs(attempt, deps.scale, randomOf(deps));
  const next = delay === undefined || attempt >= MAX_ATTEMPTS ? null : new Date(sentAt.getTime() + delay);
  return { attempt, status: ok ? 'success' : next ? 'attempting' : 'failed', next };
}

/** Any success resets the endpoint's failure streak; five days (scaled) of nothing but failures disables it. */
export async function trackEndpoint(
  deps: RecordingDeps,
  trx: Transaction<DispatcherDb>,
  endpointId: string,
  ok: boolean,
  at: Date,
): Promise<void> {
  const endpoint = await lockEndpoint(trx, endpointId);
  if (!endpoint) return;
  if (ok) {
    if (endpoint.failing_since) await updateEndpoint(trx, endpoint.id, { failing_since: null });
    return;
  }
  const since = endpoint.failing_since ?? at;
  if (endpoint.status === 'enabled' && shouldDisable(since, at, deps.scale)) {
    const reason = 'every delivery failed for 5 days';
    await updateEndpoint(trx, endpoint.id, {
      failing_since: since,
      status: 'disabled',
      disabled_reason: reason,
      disabled_at: at,
      disabled_by: 'failures',
    });
    // With the state change: the api-gateway tells the team's admins (see internal.webhook.disabled).
    await enqueue(trx, [
      {
        exchange: 'events',
        type: 'internal.webhook.disabled',
        team_id: endpoint.team_id,
        data: {
          webhook_id: endpoint.id,
          endpoint: endpoint.endpoint,
          reason,
          failing_since: since.toISOString(),
          disabled_at: at.toISOString(),
        },
      },
    ]);
    deps.logger.warn({ endpoint_id: endpoint.id, failing_since: since.toISOString() }, 'webhook endpoint disabled');
  } else if (!endpoint.failing_since) {
    await updateEndpoint(trx, endpoint.id, { failing_since: since });
  }
}

/** The key of an event's retry timer: retries of one event share it (a newer schedule replaces it). */
export function attemptTimerKey(eventId: string): string {
  return `webhook-attempt:${eventId}`;
}

/** The outbox message of a `scheduler.set-timer` that sends `command` at `due` (retries and busy waits). */
export function deliveryTimer(teamId: string, command: DeliverWebhook, due: Date): OutboxMessage {
  // A deferred replay gets a timer of its own.
  const key = command.replay ? `webhook-replay:${command.event_id}:${newId()}` : attemptTimerKey(command.event_id);
  return timerMessage(teamId, key, due, 'webhook-dispatcher.deliver', command);
}
