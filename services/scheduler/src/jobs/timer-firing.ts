import type { Kysely } from 'kysely';
import { createWakeup, reportDatabaseOutage, type Logger } from '@postline/platform';
import type { SchedulerDb } from '../db/schema.ts';
import { msUntilNextDue, pruneTombstones } from '../db/timers.ts';
import type { SchedulerMetrics } from '../metrics.ts';
import { fireDueTimers } from '../use-cases/fire-due-timers.ts';

/** Timers claimed per firing transaction; a full batch means more may be due, so the loop goes again at once. */
export const FIRE_BATCH_SIZE = 1_000;
/** Longest sleep between passes: a timer stored by another replica is seen at most this late. */
export const POLL_MS = 250;
/** Shortest sleep: due rows exist but another replica holds them (it is firing them right now). */
const MIN_WAIT_MS = 10;
/** Backoff cap while the database fails: short, since every second down is a second of lag. */
const MAX_BACKOFF_MS = 5_000;
/**
 * How long fired and cancelled keys are remembered, so that a command older than the key's last one is
 * still recognised as stale. Matches the inbox retention (a redelivered command is deduplicated as long).
 */
export const TOMBSTONE_RETENTION_MS = 7 * 24 * 3600_000;
const PRUNE_EVERY_MS = 60_000;
const PRUNE_BATCH = 5_000;

export type TimerFiringDeps = {
  db: Kysely<SchedulerDb>;
  logger: Logger;
  metrics: SchedulerMetrics;
  /** Calls `onDue` whenever a timer due soon was stored (any replica); returns how to stop listening. */
  watchDue: (onDue: () => void) => { stop(): Promise<void> };
  batchSize?: number;
  pollMs?: number;
};

export type TimerFiring = { name: string; start(): void; stop(): Promise<void> };

/**
 * The loop that publishes due timers: fire a batch (`fireDueTimers`), again at once while batches come
 * back full, then sleep until the next due time, at most `pollMs`, unless woken by a timer stored due sooner.
 * A timer that came due while the service was down fires on the first pass after start.
 *
 * @example
 * const firing = createTimerFiring({ db, logger, metrics, watchDue: (onDue) => listenForTimerDue({ ..., onDue }) });
 * firing.start();
 */
export function createTimerFiring(deps: TimerFiringDeps): TimerFiring {
  const { db, metrics } = deps;
  const log = deps.logger.child({ component: 'timer-firing' });
  const batchSize = deps.batchSize ?? FIRE_BATCH_SIZE;
  const pollMs = deps.pollMs ?? POLL_MS;

  let stopping = false;
  let loop: Promise<void> | undefined;
  let watcher: { stop(): Promise<void> } | undefined;
  const wakeup = createWakeup();
  let lastPrune = 0;

  const signal = () => wakeup.signal();
  const fireDeps = { db, metrics, logger: log };

  /** One bounded delete per call, so pruning never holds up firing for long; a full one runs again next pass. */
  async function prune(): Promise<void> {
    if (Date.now() - lastPrune < PRUNE_EVERY_MS) return;
    lastPrune = Date.now();
    const deleted = await pruneTombstones(db, TOMBSTONE_RETENTION_MS, PRUNE_BATCH);
    if (deleted === PRUNE_BATCH) lastPrune = 0;
    if (deleted > 0) log.debug({ deleted }, 'pruned timer tombstones');
  }

  async function run(): Promise<void> {
    let failures = 0;
    while (!stopping) {
      wakeup.clear();
      let waitMs = pollMs;
      try {
        const claimed = await fireDueTimers(fireDeps, batchSize);
        failures = 0;
        if (claimed === batchSize) continue;
        await prune();
        const next = await msUntilNextDue(db);
        if (next !== undefined) waitMs = Math.min(pollMs, Math.max(MIN_WAIT_MS, Math.ceil(next)));
      } catch (err) {
        failures++;
        waitMs = Math.min(pollMs * 2 ** failures, MAX_BACKOFF_MS);
        if (!reportDatabaseOutage(err)) log.error({ err, retry_in_ms: waitMs }, 'timer firing pass failed');
      }
      if (!stopping) await wakeup.sleep(waitMs);
    }
  }

  return {
    name: 'timer-firing',
    start() {
      if (loop) return;
      stopping = false;
      watcher = deps.watchDue(signal);
      loop = run();
    },
    async stop() {
      stopping = true;
      wakeup.signal();
      // The batch in flight commits or rolls back; either way no timer is lost or fired twice.
      await loop;
      await watcher?.stop();
      loop = undefined;
      watcher = undefined;
    },
  };
}
