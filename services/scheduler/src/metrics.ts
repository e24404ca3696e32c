import { Counter, Gauge, Histogram, type Metrics } from '@postline/platform';

const PENDING_READ_TIMEOUT_MS = 2_000;

export type SchedulerMetrics = {
  fired: Counter;
  failed: Counter;
  lag: Histogram;
  commands: Counter<'command' | 'outcome'>;
};

/**
 * The scheduler's own metrics on the service registry. `scheduler_timers_pending` is read from the
 * database at scrape time, so every replica reports the same, global number (aggregate with max, not
 * sum); the counters and the histogram are per replica (sum them).
 */
export function createSchedulerMetrics(
  registry: Metrics['registry'],
  countPending: () => Promise<number>,
): SchedulerMetrics {
  new Gauge({
    name: 'scheduler_timers_pending',
    help: 'Timers stored and not yet fired or cancelled (all replicas; read at scrape time)',
    registers: [registry],
    async collect() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), PENDING_READ_TIMEOUT_MS);
      });
      try {
        this.set(await Promise.race([countPending(), timeout]));
      } catch {
        // Database slow or unreachable: keep the previous value rather than failing or stalling the scrape.
      } finally {
        clearTimeout(timer);
      }
    },
  });
  return {
    fired: new Counter({
      name: 'scheduler_timers_fired_total',
      help: 'Timers whose message this replica committed to the outbox',
      registers: [registry],
    }),
    failed: new Counter({
      name: 'scheduler_timers_failed_total',
      help: 'Due timers not published because their stored message no longer matches the contracts catalog',
      registers: [registry],
    }),
    lag: new Histogram({
      name: 'scheduler_timer_lag_seconds',
      help: 'Delay from a timer due_at to its firing (claim in the firing transaction), database clock',
      // Fine below 2 s, where a healthy scheduler lives (0.25: the poll interval); the tail catches downtime and backlogs.
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60, 300, 3600],
      registers: [registry],
    }),
    commands: new Counter({
      name: 'scheduler_timer_commands_total',
      help: 'Timer commands handled, by command (set, cancel) and outcome (applied, stale: older than the key state, invalid: dead-lettered)',
      labelNames: ['command', 'outcome'] as const,
      registers: [registry],
    }),
  };
}
