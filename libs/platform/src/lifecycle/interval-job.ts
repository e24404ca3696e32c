import { reportDatabaseOutage } from '../db/db.ts';
import type { Logger } from '../logger/logger.ts';

export type IntervalJob = { name: string; start: () => void; stop: () => void };

/**
 * Runs `run` every `everyMs` once started (the timer does not keep the process alive), never two runs at
 * once: a tick that finds the last run still going is skipped. A failed run is logged as a warning
 * naming the job (a database that cannot be reached, as the database's outage: reportDatabaseOutage), and
 * the next tick tries again.
 */
export function createIntervalJob(opts: {
  name: string;
  everyMs: number;
  run: () => Promise<unknown>;
  logger: Logger;
}): IntervalJob {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  const tick = () => {
    if (running) return;
    running = true;
    opts
      .run()
      .catch((err: unknown) => {
        if (!reportDatabaseOutage(err)) opts.logger.warn({ err, job: opts.name }, `${opts.name} failed`);
      })
      .finally(() => {
        running = false;
      });
  };
  return {
    name: opts.name,
    start() {
      timer ??= setInterval(tick, opts.everyMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
