// Recording what came of delivery attempts: the attempt, the event's next state, its next retry's timer and
// its endpoint's failure streak commit together. Four ways in: the deliver consumer's outcomes, in the
// consumer's transaction (`recordOutcomes`); outcomes of in-process first attempts, in batches of their own
// (`recordFirstAttempts`); first attempts over before their event's record was written, written with it
// (`recordNewEvents`); and, inside all three, one outcome at a time for what a batch statement cannot take
// (replays, busy waits, skips, a second outcome for one event).
import type { Kysely, Transaction } from 'kysely';
import type { DeliverWebhook } from '@postline/contracts';
import { enqueue, enqueueCommand, newId, timerMessage, type Logger, type OutboxMessage } from '@postline/platform';
import { lockEndpoint, updateEndpoint } from '../db/endpoints.ts';
import {
  failUnfinishedEvent,
  insertAttempt,
  insertEvents,
  lockEvent,
  postponeFirstAttempt,
  recordScheduledAttempts,
  updateEvent,
  type DeliveryTarget,
} from '../db/events.ts';
import type { DispatcherDb, EventRow } from '../db/schema.ts';
import { newAttemptId } from '../domain/ids.ts';
import { MAX_ATTEMPTS, retryDelayMs, shouldDisable } from '../domain/schedule.ts';
import type { DeliveryMetrics } from '../metrics.ts';
import type { PostResult } from '../webhook-http/http-client.ts';
import type { AttemptMade, AttemptOutcome } from './attempt-delivery.ts';

/** What one delivery command (or in-process first attempt) needs recorded once its POST is over. */
export type CommandOutcome = { command: DeliverWebhook; teamId: string; outcome: AttemptOutcome };

/** The target of an event whose record is not written yet: what its record needs besides. */
export type NewEventTarget = DeliveryTarget & { event: Pick<EventRow, 'source_event_id' | 'type'> };

/** A new event's record to write and, when its first attempt is over already, that attempt. */
export type NewEvent = { target: NewEventTarget; attemptMade: AttemptMade | undefined };

export type RecordAttemptsDeps = {
  db: Kysely<DispatcherDb>;
  logger: Logger;
  /** POSTLINE_DELAY_SCALE. */
  scale: number;
  metrics: DeliveryMetrics;
  random?: () => number;
  now?: () => Date;
};

export type AttemptRecording = {
  /**
   * Records outcomes in the caller's transaction. Scheduled attempts (the hot path) settle their events and
   * record their attempts with one statement, and their retry timers with one outbox write. Returns what to
   * run once the transaction has committed (the metrics).
   */
  recordOutcomes: (trx: Transaction<DispatcherDb>, outcomes: CommandOutcome[]) => Promise<() => void>;
  /**
   * Records outcomes of in-process first attempts in a transaction of their own. If that fails, each
   * outcome is recorded on its own; one that still fails is left to the first-attempt sweeper. Never throws.
   */
  recordFirstAttempts: (outcomes: CommandOutcome[]) => Promise<void>;
  /**
   * Writes the records of new events in the caller's transaction, one statement for all: an event whose
   * first attempt is over is written settled, with that attempt, its retry timer and its endpoint's failure
   * streak. An event whose record exists already writes nothing. Returns the ids of the records written and
   * what to run once the transaction has committed.
   */
  recordNewEvents: (
    trx: Transaction<DispatcherDb>,
    events: NewEvent[],
  ) => Promise<{ created: Set<string>; afterCommit: () => void }>;
};

/** How long a delivery waits when its endpoint already has `perEndpoint` deliveries in flight (and as many waiting). */
const BUSY_WAIT_MS = 500;

/** The first outcome of an event's scheduled (not replayed) attempt. */
type ScheduledOutcome = CommandOutcome & { outcome: AttemptMade };
/** A scheduled attempt recorded, with its event and when the next one is due (null: none). */
type RecordedAttempt = {
  event: Pick<EventRow, 'id' | 'endpoint_id' | 'team_id'>;
  attempt: number;
  next: Date | null;
  outcome: AttemptMade;
};
/**
 * Attempts whose outcomes a transaction records. They are counted in the metrics once it has committed,
 * since a failed batch is recorded again one outcome at a time.
 */
type Uncounted = { replay: boolean; result: PostResult }[];

export function createAttemptRecording(deps: RecordAttemptsDeps): AttemptRecording {
  const now = () => deps.now?.() ?? new Date();
  const random = () => (deps.random ?? Math.random)();

  const countAfterCommit = (uncounted: Uncounted) => () =>
    uncounted.forEach(({ replay, result }) => countAttempt(replay, result));

  function countAttempt(replay: boolean, result: PostResult): void {
    const outcome = result.ok ? 'success' : 'failure';
    deps.metrics.deliveries.inc({ outcome: replay ? `replay_${outcome}` : outcome });
    deps.metrics.attemptDuration.observe({ outcome }, result.durationMs / 1000);
  }

  async function recordOutcomes(trx: Transaction<DispatcherDb>, outcomes: CommandOutcome[]): Promise<() => void> {
    const uncounted: Uncounted = [];
    await recordMany(trx, outcomes, uncounted);
    return countAfterCommit(uncounted);
  }

  async function recordMany(
    trx: Transaction<DispatcherDb>,
    outcomes: CommandOutcome[],
    uncounted: Uncounted,
  ): Promise<void> {
    const { scheduled, others } = splitScheduled(outcomes);
    if (scheduled.length > 0) await followUpScheduled(trx, await settleScheduled(trx, scheduled, uncounted));
    for (const outcome of others) await recordOne(trx, outcome, uncounted);
  }

  async function recordOne(
    trx: Transaction<DispatcherDb>,
    { command, teamId, outcome }: CommandOutcome,
    uncounted: Uncounted,
  ): Promise<void> {
    if (outcome.kind === 'busy') {
      const due = new Date(now().getTime() + BUSY_WAIT_MS * (1 + random()));
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
    if (!command.replay) return recordMany(trx, [{ command, teamId, outcome }], uncounted);
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
    if (!result.ok || outcome.endpointFailing) await trackEndpoint(trx, event.endpoint_id, result.ok, sentAt);
  }

  /** The first outcome of each event's scheduled attempt, apart from the rest (replays, busy, skips, twins). */
  function splitScheduled(outcomes: CommandOutcome[]): { scheduled: ScheduledOutcome[]; others: CommandOutcome[] } {
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
   * Settles the events of scheduled attempts and records the attempts, in one statement (atomic on its
   * own); returns those recorded.
   */
  async function settleScheduled(
    db: Kysely<DispatcherDb>,
    scheduled: ScheduledOutcome[],
    uncounted: Uncounted,
  ): Promise<RecordedAttempt[]> {
    const plans = scheduled.map((item) => ({
      ...item,
      ...planAfterAttempt(item.command.attempt ?? 1, item.outcome.result.ok, item.outcome.sentAt),
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
  async function followUpScheduled(trx: Transaction<DispatcherDb>, recorded: RecordedAttempt[]): Promise<void> {
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
      await trackEndpoint(trx, event.endpoint_id, outcome.result.ok, outcome.sentAt);
  }

  /** The event's state after scheduled attempt `attempt`: success, the next retry's time, or failed after the eighth. */
  function planAfterAttempt(
    attempt: number,
    ok: boolean,
    sentAt: Date,
  ): { attempt: number; status: EventRow['status']; next: Date | null } {
    const delay = ok ? undefined : retryDelayMs(attempt, deps.scale, random());
    const next = delay === undefined || attempt >= MAX_ATTEMPTS ? null : new Date(sentAt.getTime() + delay);
    return { attempt, status: ok ? 'success' : next ? 'attempting' : 'failed', next };
  }

  /** A replay never moves the schedule; a successful one settles an event that was still failing. */
  async function afterReplay(trx: Transaction<DispatcherDb>, event: EventRow, ok: boolean): Promise<void> {
    if (!ok || event.status === 'success') return;
    await updateEvent(trx, event.id, { status: 'success', next_attempt_at: null });
    if (event.status === 'attempting' || event.status === 'pending') {
      await enqueueCommand(trx, 'scheduler.cancel-timer', event.team_id, { key: attemptTimerKey(event.id) });
    }
  }

  /** Any success resets the endpoint's failure streak; five days (scaled) of nothing but failures disables it. */
  async function trackEndpoint(
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
      await updateEndpoint(trx, endpoint.id, {
        failing_since: since,
        status: 'disabled',
        disabled_reason: 'every delivery failed for 5 days',
      });
      deps.logger.warn({ endpoint_id: endpoint.id, failing_since: since.toISOString() }, 'webhook endpoint disabled');
    } else if (!endpoint.failing_since) {
      await updateEndpoint(trx, endpoint.id, { failing_since: since });
    }
  }

  async function recordFirstAttempts(outcomes: CommandOutcome[]): Promise<void> {
    try {
      await recordFirstAttemptBatch(outcomes);
    } catch (err) {
      if (outcomes.length > 1)
        deps.logger.info(
          { err, outcomes: outcomes.length },
          'recording a batch of first attempts failed; recording them one by one',
        );
      for (const item of outcomes) {
        await deps.db
          .transaction()
          .execute((trx) => recordOutcomes(trx, [item]))
          .then((afterCommit) => afterCommit())
          .catch((e: unknown) =>
            deps.logger.warn(
              { err: e, event_id: item.command.event_id },
              'first attempt failed to record; the sweeper will retry it',
            ),
          );
      }
    }
  }

  /**
   * A batch of nothing but successes on healthy endpoints (the usual one) writes a single statement, atomic
   * on its own, so it skips the transaction's two extra round trips.
   */
  async function recordFirstAttemptBatch(outcomes: CommandOutcome[]): Promise<void> {
    const { scheduled, others } = splitScheduled(outcomes);
    const uncounted: Uncounted = [];
    if (others.length === 0 && scheduled.every(({ outcome }) => outcome.result.ok && !outcome.endpointFailing)) {
      await settleScheduled(deps.db, scheduled, uncounted);
    } else {
      await deps.db.transaction().execute((trx) => recordMany(trx, outcomes, uncounted));
    }
    countAfterCommit(uncounted)();
  }

  async function recordNewEvents(
    trx: Transaction<DispatcherDb>,
    events: NewEvent[],
  ): Promise<{ created: Set<string>; afterCommit: () => void }> {
    const rows = events.map(({ target, attemptMade }) => ({
      target,
      attemptMade,
      plan: attemptMade && planAfterAttempt(1, attemptMade.result.ok, attemptMade.sentAt),
    }));
    const created = new Set(
      await insertEvents(
        trx,
        rows.map(({ target: { event }, attemptMade, plan }) => ({
          id: event.id,
          endpoint_id: event.endpoint_id,
          team_id: event.team_id,
          source_event_id: event.source_event_id,
          type: event.type,
          body: event.body,
          status: plan?.status ?? 'pending',
          attempts_made: plan ? 1 : 0,
          next_attempt_at: plan ? plan.next : new Date(),
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
    const settled = rows.flatMap(({ target: { event }, attemptMade, plan }) =>
      attemptMade && plan && created.has(event.id)
        ? [{ event, attempt: 1, next: plan.next, outcome: attemptMade }]
        : [],
    );
    await followUpScheduled(trx, settled);
    return {
      created,
      afterCommit: () => {
        for (const { outcome } of settled) countAttempt(false, outcome.result);
      },
    };
  }

  return { recordOutcomes, recordFirstAttempts, recordNewEvents };
}

/** The key of an event's retry timer: retries of one event share it (a newer schedule replaces it). */
function attemptTimerKey(eventId: string): string {
  return `webhook-attempt:${eventId}`;
}

/** The outbox message of a `scheduler.set-timer` that sends `command` at `due` (retries and busy waits). */
function deliveryTimer(teamId: string, command: DeliverWebhook, due: Date): OutboxMessage {
  // A deferred replay gets a timer of its own.
  const key = command.replay ? `webhook-replay:${command.event_id}:${newId()}` : attemptTimerKey(command.event_id);
  return timerMessage(teamId, key, due, 'webhook-dispatcher.deliver', command);
}
