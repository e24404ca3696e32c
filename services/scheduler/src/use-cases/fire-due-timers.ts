import type { Kysely } from 'kysely';
import { enqueue, type Logger, type OutboxMessage } from '@postline/platform';
import type { SchedulerDb } from '../db/schema.ts';
import { claimDueTimers, settleTimers } from '../db/timers.ts';
import { firedMessage } from '../domain/timer.ts';
import type { SchedulerMetrics } from '../metrics.ts';

export type FireDueTimersDeps = {
  db: Kysely<SchedulerDb>;
  metrics: SchedulerMetrics;
  logger: Logger;
};

type Fired = { claimed: number; fired: { lag_seconds: number }[]; failed: { key: string; error: string }[] };

/**
 * Fires one batch in one transaction: claims up to `batchSize` due pending timers (FOR UPDATE SKIP LOCKED,
 * so replicas never claim the same row), writes their messages to the outbox in one insert, marks them
 * fired (or failed, when the stored message no longer matches the contracts catalog), commits. Returns
 * how many were claimed: a full batch means more may be due.
 */
export async function fireDueTimers(deps: FireDueTimersDeps, batchSize: number): Promise<number> {
  const { db, metrics } = deps;
  const result = await db.transaction().execute(async (trx): Promise<Fired> => {
    const due = await claimDueTimers(trx, batchSize);
    const messages: OutboxMessage[] = [];
    const firedKeys: string[] = [];
    const fired: Fired['fired'] = [];
    const failed: Fired['failed'] = [];
    for (const timer of due) {
      const message = firedMessage(timer.routing_key, timer.message);
      if (message.ok) {
        messages.push(message.value);
        firedKeys.push(timer.key);
        fired.push(timer);
      } else {
        failed.push({ key: timer.key, error: message.error });
      }
    }
    await enqueue(trx, messages);
    await settleTimers(trx, firedKeys, 'fired');
    await settleTimers(
      trx,
      failed.map((timer) => timer.key),
      'failed',
    );
    return { claimed: due.length, fired, failed };
  });
  // Counted after commit: a rolled-back batch is claimed again and counted then.
  metrics.fired.inc(result.fired.length);
  for (const timer of result.fired) metrics.lag.observe(Math.max(0, timer.lag_seconds));
  if (result.failed.length > 0) {
    metrics.failed.inc(result.failed.length);
    for (const timer of result.failed)
      deps.logger.error({ key: timer.key, error: timer.error }, 'timer message no longer valid; not published');
  }
  return result.claimed;
}
