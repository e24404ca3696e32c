// Wiring only: config → runtime (logger, metrics, db, broker, outbox relay, HTTP, graceful stop) → this
// service's own parts.
import {
  createRetentionPruner,
  createSecretBox,
  createServiceRuntime,
  readTeamRetention,
  retentionPruneEveryMs,
  teamRetentionRoutes,
} from '@postline/platform';
import { loadConfig, SCHEMA } from './config.ts';
import { createDeliverWebhookConsumer } from './consumers/deliver-webhook.ts';
import { createPublicEventsConsumer, PUBLIC_EVENT_FAMILIES } from './consumers/public-events.ts';
import { readUndelivered } from './db/events.ts';
import { DISPATCHER_RETAINED_TABLES } from './db/retention.ts';
import type { DispatcherDb } from './db/schema.ts';
import { internalRoutes } from './http/routes.ts';
import { createFirstAttemptSweeper } from './jobs/first-attempt-sweeper.ts';
import { createDispatcherMetrics } from './metrics.ts';
import { createAttemptDelivery } from './use-cases/attempt-delivery.ts';
import type { RecordingDeps } from './use-cases/attempt-records.ts';
import { createFanOut } from './use-cases/fan-out.ts';
import { createFirstAttempts } from './use-cases/first-attempts.ts';
import { createWebhookClient } from './webhook-http/http-client.ts';

/** Deliveries in flight per endpoint: a burst to one endpoint moves at this many times its latency. */
const PER_ENDPOINT = 32;
/** Deliveries in flight overall: eight endpoints hanging at once (each holding its 32 for up to 15 s) before the others wait for a slot. */
const OVERALL = 256;

const config = loadConfig();
const runtime = createServiceRuntime<DispatcherDb>({ service: 'webhook-dispatcher', schema: SCHEMA, config });
const { db, broker, logger } = runtime;
const metrics = createDispatcherMetrics(runtime.metrics.registry, () => readUndelivered(db));
const box = createSecretBox(config.POSTLINE_SECRET_KEY);
// As many sockets per endpoint as deliveries in flight to it, so none of those waits in the client's queue.
const client = createWebhookClient({
  allowPrivate: config.ALLOW_PRIVATE_NETWORK_TARGETS,
  maxConnectionsPerOrigin: PER_ENDPOINT,
});

const delivery = createAttemptDelivery({ db, box, client, perEndpoint: PER_ENDPOINT, overall: OVERALL });
const recording: RecordingDeps = { db, logger, scale: config.POSTLINE_DELAY_SCALE, metrics };
const firstAttempts = createFirstAttempts({ delivery, recording, logger });
const publicEvents = createPublicEventsConsumer({
  db,
  broker,
  logger,
  fanOut: createFanOut({ db, firstAttempts }),
  firstAttempts,
});
const deliverCommands = createDeliverWebhookConsumer({ db, broker, logger, delivery, recording, prefetch: OVERALL });
const sweeper = createFirstAttemptSweeper({ db, logger });

await runtime.start({
  routes: (app) => {
    // Not an API route: the gateway's push of a team's retention, for this service's retention job.
    app.use(teamRetentionRoutes(db));
    app.use(
      internalRoutes({
        db,
        box,
        allowPrivate: config.ALLOW_PRIVATE_NETWORK_TARGETS,
        scale: config.POSTLINE_DELAY_SCALE,
      }),
    );
  },
  // Stopped in reverse: public events first, then the in-process first attempts they started finish and
  // are recorded, and the client closes last.
  parts: [
    { name: 'webhook client', start: () => undefined, stop: () => client.close() },
    { name: 'first-attempt sweeper', start: () => sweeper.start(), stop: () => sweeper.stop() },
    createRetentionPruner({
      db,
      logger,
      registry: runtime.metrics.registry,
      everyMs: retentionPruneEveryMs(config.POSTLINE_DELAY_SCALE),
      retentionOf: () => readTeamRetention(db),
      tables: DISPATCHER_RETAINED_TABLES,
    }),
    { name: 'webhook-dispatcher.deliver', start: () => deliverCommands.start(), stop: () => deliverCommands.stop() },
    { name: 'in-process first attempts', start: () => undefined, stop: () => firstAttempts.stop() },
    // Named, as every consumer is in logs, by what it consumes.
    {
      name: PUBLIC_EVENT_FAMILIES.join(', '),
      start: () => publicEvents.start(),
      stop: () => publicEvents.stop(),
    },
  ],
});
