import { Counter, Gauge, Histogram, type Metrics } from '@postline/platform';

/** The counters every recorded attempt feeds (see use-cases/attempt-records.ts). */
export type DeliveryMetrics = {
  deliveries: Counter<'outcome'>;
  attemptDuration: Histogram<'outcome'>;
};

/** Events not yet delivered or failed, as readUndelivered in db/events.ts reads them. */
export type Undelivered = { count: number; oldestAgeSeconds: number };

/** One read serves both backlog gauges of a scrape (and any other scrape within this long). */
const UNDELIVERED_READ_REUSE_MS = 500;

/**
 * The dispatcher's own metrics on the service registry. The two backlog gauges are read from the database
 * at scrape time, so every replica reports the same, global numbers (aggregate with max, not sum); the
 * counter and the histogram are per replica (sum them).
 */
export function createDispatcherMetrics(
  registry: Metrics['registry'],
  readUndelivered: () => Promise<Undelivered>,
): DeliveryMetrics {
  const registers = [registry];
  const delivery: DeliveryMetrics = {
    deliveries: new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (success, failure, replay_success, replay_failure)',
      labelNames: ['outcome'] as const,
      registers,
    }),
    attemptDuration: new Histogram({
      name: 'webhook_attempt_duration_seconds',
      help: 'Time from sending a webhook request to its outcome',
      labelNames: ['outcome'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers,
    }),
  };
  let lastRead: { at: number; value: Promise<Undelivered> } | undefined;
  function undelivered(): Promise<Undelivered> {
    if (!lastRead || Date.now() - lastRead.at > UNDELIVERED_READ_REUSE_MS)
      lastRead = { at: Date.now(), value: readUndelivered() };
    return lastRead.value;
  }
  new Gauge({
    name: 'webhook_events_pending',
    help: 'Webhook events not yet delivered or failed',
    registers,
    async collect() {
      this.set((await undelivered()).count);
    },
  });
  new Gauge({
    name: 'webhook_events_oldest_pending_age_seconds',
    help: 'Age of the oldest webhook event not yet delivered or failed',
    registers,
    async collect() {
      this.set((await undelivered()).oldestAgeSeconds);
    },
  });
  return delivery;
}
