// First attempts made in process, before their event's record is written: the fan-out's message stays
// unacked until the record is, so a crash before the write redelivers the message and the attempt is made
// again with the same `webhook-id`. An attempt over by the time the record is written is written with it
// (settled); the others are written pending and their outcomes recorded afterwards, in batches, with the
// first-attempt sweeper covering a crash in between. How many are under way at once is bounded (`admit`).
import type { Kysely, Transaction } from 'kysely';
import type { DeliverWebhook } from '@postline/contracts';
import { createBatcher, enqueue, type Logger } from '@postline/platform';
import { claimStaleFirstAttempts, type DeliveryTarget } from '../db/events.ts';
import type { DispatcherDb } from '../db/schema.ts';
import type { AttemptDelivery, AttemptOutcome } from './attempt-delivery.ts';
import {
  attemptMadeOf,
  type CommandOutcome,
  type FirstAttempt,
  type NewRecord,
  type RecordingDeps,
} from './attempt-records.ts';
import { recordFirstAttempts } from './record-first-attempts.ts';
import { recordNewEvents } from './record-new-events.ts';

export type FirstAttemptsDeps = {
  delivery: Pick<AttemptDelivery, 'attempt'>;
  recording: RecordingDeps;
  logger: Logger;
  /**
   * In-process first attempts (`begin`) under way at once (waiting, posting, being recorded). At this many,
   * `admit` holds the fan-out back, so a burst waits in its durable queue rather than in memory. Default 2,048.
   */
  inProcessLimit?: number;
  /**
   * How long an in-process first attempt waits in memory for a slot of its endpoint; past that it waits on a
   * short timer instead, as a busy command does, so a hanging endpoint cannot hold `inProcessLimit`.
   * Default 2 s.
   */
  inProcessWaitMs?: number;
};

export type FirstAttempts = {
  /**
   * Starts the first attempt of an event whose record is not written yet. Never throws. Counts as in process
   * until its record is written (`writeRecords`) or it is discarded.
   */
  begin: (target: DeliveryTarget) => FirstAttempt;
  /**
   * Writes the records of new events in the caller's transaction (see record-new-events.ts).
   * Once the transaction has committed (the returned function), the attempts of the records written pending
   * are followed, or made for records that had none, and recorded by update. A record that exists already (a
   * redelivered copy) writes nothing.
   */
  writeRecords: (trx: Transaction<DispatcherDb>, records: NewRecord[]) => Promise<() => void>;
  /** Records that will not be written (their message is retried or was a duplicate): releases them. */
  discard: (records: NewRecord[]) => void;
  /** Resolves once there is room for more in-process first attempts (the fan-out awaits it first). */
  admit: () => Promise<void>;
  /** Lets in-process first attempts finish (bounded) and records their outcomes. */
  stop: () => Promise<void>;
};

export function createFirstAttempts(deps: FirstAttemptsDeps): FirstAttempts {
  const inProcessLimit = deps.inProcessLimit ?? 2048;
  const inProcessWaitMs = deps.inProcessWaitMs ?? 2_000;
  let inProcess = 0;
  const admissions: (() => void)[] = [];
  const attempting = new Set<Promise<void>>();
  const commands = new WeakMap<FirstAttempt, { command: DeliverWebhook; teamId: string }>();

  /**
   * Outcomes of first attempts written pending, recorded in batches (one transaction for many). An outcome
   * waits up to 25 ms for others: the POST is already answered, so only the record waits, and responses
   * arrive one at a time.
   */
  const outcomes = createBatcher<CommandOutcome>({
    maxItems: 64,
    maxWaitMs: 25,
    maxConcurrent: 2,
    flush: (batch) => recordFirstAttempts(deps.recording, batch),
  });

  function begin(target: DeliveryTarget): FirstAttempt {
    const command: DeliverWebhook = { event_id: target.event.id, attempt: 1, replay: false };
    inProcess++;
    const first: { outcome: Promise<AttemptOutcome | undefined>; settled?: AttemptOutcome } = {
      outcome: deps.delivery.attempt(target, command, { timeoutMs: inProcessWaitMs }).then(
        (outcome) => (first.settled = outcome),
        (err: unknown) => {
          deps.logger.warn(
            { err, event_id: target.event.id },
            'first attempt failed to run; the sweeper will retry it',
          );
          return undefined;
        },
      ),
    };
    commands.set(first, { command, teamId: target.event.team_id });
    return first;
  }

  /**
   * The end of a first attempt's time in process: once it is over, its outcome goes to the batcher to be
   * recorded (`record`, for an event written pending) or nowhere (written settled, or not written).
   */
  function end(first: FirstAttempt, record: boolean): void {
    const { command, teamId } = commands.get(first)!;
    const run = first.outcome
      .then((outcome) => (record && outcome ? outcomes.add({ command, teamId, outcome }) : undefined))
      .catch((err: unknown) =>
        deps.logger.warn(
          { err, event_id: command.event_id },
          'first attempt failed to record; the sweeper will retry it',
        ),
      )
      .finally(() => {
        inProcess--;
        attempting.delete(run);
        // One waiting fan-out message per freed place (a message may add several); all once idle.
        if (inProcess === 0) admissions.splice(0).forEach((admitted) => admitted());
        else if (inProcess < inProcessLimit) admissions.shift()?.();
      });
    attempting.add(run);
  }

  async function writeRecords(trx: Transaction<DispatcherDb>, records: NewRecord[]): Promise<() => void> {
    const { created, afterCommit } = await recordNewEvents(deps.recording, trx, records);
    return () => {
      afterCommit();
      for (const record of records) {
        const { target, first } = record;
        if (!first) {
          // A record written failed (its endpoint disabled) has nothing to attempt.
          if (created.has(target.event.id) && target.event.status === 'pending') end(begin(target), true);
        } else end(first, created.has(target.event.id) && !attemptMadeOf(record));
      }
    };
  }

  function discard(records: NewRecord[]): void {
    for (const { first } of records) if (first) end(first, false);
  }

  function admit(): Promise<void> {
    if (inProcess < inProcessLimit) return Promise.resolve();
    return new Promise((resolve) => admissions.push(resolve));
  }

  async function stop(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, 5_000)));
    await Promise.race([Promise.all([...attempting]), deadline]);
    clearTimeout(timer);
    await outcomes.drain();
  }

  return { begin, writeRecords, discard, admit, stop };
}

/** A first attempt that never ran (its process died) is swept after this long. */
export const FIRST_ATTEMPT_STALE_MS = 30_000;

/**
 * Recovers first attempts started in process whose outcome was never recorded: events still pending, never
 * attempted, and untouched for `staleMs` get a `webhook-dispatcher.deliver` command through the outbox.
 * Returns how many.
 */
export async function sweepStaleFirstAttempts(db: Kysely<DispatcherDb>, staleMs: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const stale = await claimStaleFirstAttempts(trx, staleMs);
    await enqueue(
      trx,
      stale.map((event) => ({
        exchange: 'commands' as const,
        type: 'webhook-dispatcher.deliver' as const,
        team_id: event.team_id,
        data: { event_id: event.id, attempt: 1, replay: false },
      })),
    );
    return stale.length;
  });
}
