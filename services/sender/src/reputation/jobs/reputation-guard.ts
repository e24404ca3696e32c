import { createIntervalJob, type IntervalJob } from '@postline/platform';
import { foldReputation, FOLD_BATCH, type GuardDeps } from '../use-cases/reputation-guard.ts';

/**
 * Runs the reputation guard every `everyMs` (default 5 s): folds the outcomes recorded since into the
 * windows and pauses what is over a line. Keeps folding while full batches come.
 */
export function createReputationGuard(deps: GuardDeps & { everyMs?: number }): IntervalJob {
  return createIntervalJob({
    name: 'reputation-guard',
    everyMs: deps.everyMs ?? 5000,
    run: async () => {
      for (let round = 0; round < 20; round++) if ((await foldReputation(deps)).folded < FOLD_BATCH) return;
    },
    logger: deps.logger,
  });
}
