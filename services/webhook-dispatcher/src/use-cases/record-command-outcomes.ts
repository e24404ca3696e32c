// The outcomes of `webhook-dispatcher.deliver` commands, recorded in the deliver consumer's transaction.
import type { Transaction } from 'kysely';
import type { DispatcherDb } from '../db/schema.ts';
import {
  countAfterCommit,
  followUpScheduled,
  settleScheduled,
  splitScheduled,
  type CommandOutcome,
  type RecordingDeps,
  type Uncounted,
} from './attempt-records.ts';
import { recordSingleOutcome } from './record-single-outcome.ts';

/**
 * Records outcomes in the caller's transaction. Scheduled attempts (the hot path) settle their events and
 * record their attempts with one statement, and their retry timers with one outbox write; the rest are
 * recorded one at a time. Returns what to run once the transaction has committed (the metrics).
 */
export async function recordCommandOutcomes(
  deps: RecordingDeps,
  trx: Transaction<DispatcherDb>,
  outcomes: CommandOutcome[],
): Promise<() => void> {
  const uncounted: Uncounted = [];
  const { scheduled, others } = splitScheduled(outcomes);
  if (scheduled.length > 0) await followUpScheduled(deps, trx, await settleScheduled(deps, trx, scheduled, uncounted));
  for (const outcome of others) await recordSingleOutcome(deps, trx, outcome, uncounted);
  return countAfterCommit(deps, uncounted);
}
