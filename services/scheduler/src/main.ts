// Wiring only: config → runtime (logger, metrics, db, broker, outbox relay, HTTP, graceful stop) → this
// service's own parts.
import { createServiceRuntime } from '@postline/platform';
import { loadConfig, SCHEMA } from './config.ts';
import { createTimerCommandsConsumer } from './consumers/timer-commands.ts';
import type { SchedulerDb } from './db/schema.ts';
import { countPendingTimers } from './db/timers.ts';
import { listenForTimerDue } from './jobs/timer-due-listener.ts';
import { createTimerFiring, FIRE_BATCH_SIZE, POLL_MS } from './jobs/timer-firing.ts';
import { createSchedulerMetrics } from './metrics.ts';

const config = loadConfig();
// Timers come due in bursts (every email scheduled for 9:00): the relay publishes a whole firing batch per
// transaction instead of the default 100 rows.
const runtime = createServiceRuntime<SchedulerDb>({
  service: 'scheduler',
  schema: SCHEMA,
  config,
  relayBatchSize: FIRE_BATCH_SIZE,
});
const { db, broker, logger } = runtime;
const metrics = createSchedulerMetrics(runtime.metrics.registry, () => countPendingTimers(db));
const firing = createTimerFiring({
  db,
  logger,
  metrics,
  watchDue: (onDue) => listenForTimerDue({ databaseUrl: config.DATABASE_URL, schema: SCHEMA, logger, onDue }),
});
const commands = createTimerCommandsConsumer({ broker, db, logger, metrics, wakeWithinMs: POLL_MS });
// The scheduler has no HTTP API of its own: timers arrive as commands. Firing starts first, so timers that
// came due while the service was down go out without waiting for the command queue; it stops last.
await runtime.start({
  parts: [firing, { name: 'scheduler.timer-commands', start: () => commands.start(), stop: () => commands.stop() }],
});
