import type { Kysely } from 'kysely';
import { reportDatabaseOutage, type Logger } from '@postline/platform';
import type { DispatcherDb } from '../db/schema.ts';
import { FIRST_ATTEMPT_STALE_MS, sweepStaleFirstAttempts } from '../use-cases/first-attempts.ts';

export type FirstAttemptSweeperDeps = {
  db: Kysely<DispatcherDb>;
  logger: Logger;
  /** Default 10 s. */
  everyMs?: number;
  /** Default FIRST_ATTEMPT_STALE_MS. */
  staleMs?: number;
};

/** Sweeps first attempts that never ran (sweepStaleFirstAttempts) every `everyMs`, one sweep at a time. */
export function createFirstAttemptSweeper(deps: FirstAttemptSweeperDeps) {
  const everyMs = deps.everyMs ?? 10_000;
  const staleMs = deps.staleMs ?? FIRST_ATTEMPT_STALE_MS;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  return {
    start() {
      timer = setInterval(() => {
        if (running) return;
        running = sweepStaleFirstAttempts(deps.db, staleMs)
          .then((swept) => {
            if (swept > 0) deps.logger.warn({ events: swept }, 'swept first attempts that never ran');
          })
          .catch((err: unknown) => {
            if (!reportDatabaseOutage(err)) deps.logger.error({ err }, 'first-attempt sweep failed');
          })
          .finally(() => (running = undefined));
      }, everyMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
