// Wiring only: config → runtime (logger, metrics, db, broker, outbox relay, HTTP, graceful stop) → this
// service's own parts.
import { sql } from 'kysely';
import { Counter, createSecretBox, createServiceRuntime, Gauge, Histogram } from '@postline/platform';
import { loadConfig, SCHEMA } from './config.ts';
import type { DispatcherDb } from './db/schema.ts';
import { createDeliveries, createFirstAttemptSweeper } from './deliver.ts';
import { createWebhookClient } from './delivery/http-client.ts';
import { createFanOutConsumer } from './fan-out.ts';
import { internalRoutes } from './http/routes.ts';

const config = loadConfig();
const runtime = createServiceRuntime<DispatcherDb>({ service: 'webhook-dispatcher', schema: SCHEMA, config });
const { db, broker, logger, metrics } = runtime;
const registers = [metrics.registry];
const box = createSecretBox(config.POSTLINE_SECRET_KEY);
// Deliveries in flight per endpoint: a burst to one endpoint moves at this many times its latency (16 held
// a local receiver to about 16 / 3.5 ms on a busy 2-core VM, with a hundred or more waiting for a slot).
const PER_ENDPOINT = 32;
// As many sockets per endpoint as deliveries in flight to it, so none of those waits in the client's queue.
const client = createWebhookClient({ allowPrivate: config.ALLOW_PRIVATE_NETWORK_TARGETS, maxConnectionsPerOrigin: PER_ENDPOINT });

const deliveries = createDeliveries({
  db,
  broker,
  logger,
  box,
  client,
  scale: config.POSTLINE_DELAY_SCALE,
  perEndpoint: PER_ENDPOINT,
  // Eight endpoints hanging at once (each holding its 32 for up to 15 s) before the others wait for a slot.
  overall: 256,
  metrics: {
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
  },
});

const fanOut = createFanOutConsumer({ db, broker, logger, deliveries });
const sweeper = createFirstAttemptSweeper({ db, logger });

// Read from the database on scrape (one query shared by both gauges): what is waiting, and since when.
let backlog: { at: number; value: Promise<{ n: number; age: number }> } | undefined;
function readBacklog(): Promise<{ n: number; age: number }> {
  if (!backlog || Date.now() - backlog.at > 500) {
    const value = sql<{ n: number; age: number | null }>`select count(*)::int as n,
      extract(epoch from now() - min(created_at))::float8 as age
      from webhook_events where status in ('pending', 'attempting')`
      .execute(db)
      .then(({ rows }) => ({ n: rows[0]?.n ?? 0, age: Math.max(0, rows[0]?.age ?? 0) }));
    backlog = { at: Date.now(), value };
  }
  return backlog.value;
}
new Gauge({
  name: 'webhook_events_pending',
  help: 'Webhook events not yet delivered or failed',
  registers,
  async collect() {
    this.set((await readBacklog()).n);
  },
});
new Gauge({
  name: 'webhook_events_oldest_pending_age_seconds',
  help: 'Age of the oldest webhook event not yet delivered or failed',
  registers,
  async collect() {
    this.set((await readBacklog()).age);
  },
});

await runtime.start({
  routes: (app) => app.use(internalRoutes({ db, box, allowPrivate: config.ALLOW_PRIVATE_NETWORK_TARGETS, scale: config.POSTLINE_DELAY_SCALE })),
  // Stopped in reverse: the fan-out first, then its in-process first attempts finish and are recorded,
  // and the client closes last.
  parts: [
    { name: 'webhook client', start: () => undefined, stop: () => client.close() },
    { name: 'first-attempt sweeper', start: () => sweeper.start(), stop: () => sweeper.stop() },
    { name: 'deliver consumer', start: () => deliveries.consumer.start(), stop: () => deliveries.consumer.stop() },
    { name: 'in-process deliveries', start: () => undefined, stop: () => deliveries.stop() },
    { name: 'fan-out consumer', start: () => fanOut.start(), stop: () => fanOut.stop() },
  ],
});
