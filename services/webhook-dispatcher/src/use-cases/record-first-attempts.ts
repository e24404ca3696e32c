// The outcomes of in-process first attempts whose records were written pending, recorded in batches of
// their own (first-attempts.ts batches them), each in a transaction of its own.
import {
  countAfterCommit,
  settleScheduled,
  splitScheduled,
  type CommandOutcome,
  type RecordingDeps,
  type Uncounted,
} from './attempt-records.ts';
import { recordCommandOutcomes } from './record-command-outcomes.ts';

/**
 * Records outcomes of in-process first attempts in a transaction of their own. If that fails, each outcome
 * is recorded on its own; one that still fails is left to the first-attempt sweeper. Never throws.
 */
export async function recordFirstAttempts(deps: RecordingDeps, outcomes: CommandOutcome[]): Promise<void> {
  try {
    await recordBatch(deps, outcomes);
  } catch (err) {
    if (outcomes.length > 1)
      deps.logger.info(
        { err, outcomes: outcomes.length },
        'recording a batch of first attempts failed; recording them one by one',
      );
    for (const item of outcomes) {
      await deps.db
        .transaction()
        .execute((trx) => recordCommandOutcomes(deps, trx, [item]))
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
async function recordBatch(deps: RecordingDeps, outcomes: CommandOutcome[]): Promise<void> {
  const { scheduled, others } = splitScheduled(outcomes);
  if (others.length === 0 && scheduled.every(({ outcome }) => outcome.result.ok && !outcome.endpointFailing)) {
    const uncounted: Uncounted = [];
    await settleScheduled(deps, deps.db, scheduled, uncounted);
    countAfterCommit(deps, uncounted)();
    return;
  }
  const afterCommit = await deps.db.transaction().execute((trx) => recordCommandOutcomes(deps, trx, outcomes));
  afterCommit();
}
