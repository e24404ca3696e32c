import { createIntervalJob, type IntervalJob, type Logger } from '@postline/platform';
import type { Kysely } from 'kysely';
import { foldMetricDeltas } from '../db/email-metrics.ts';
import type { SenderDb } from '../../db/schema.ts';

/** Deltas folded per statement; a busy interval takes several. */
const BATCH = 5000;

/**
 * Folds the metric deltas into their counters every `everyMs` (default 5 s), so that reading a month of
 * metrics sums one row per hour and key, not one per delivery batch. Keeps folding while full batches come.
 */
export function createMetricFold(deps: { db: Kysely<SenderDb>; logger: Logger; everyMs?: number }): IntervalJob {
  return createIntervalJob({
    name: 'metric-fold',
    everyMs: deps.everyMs ?? 5000,
    run: async () => {
      for (let round = 0; round < 20; round++) if ((await foldMetricDeltas(deps.db, BATCH)) < BATCH) return;
    },
    logger: deps.logger,
  });
}
