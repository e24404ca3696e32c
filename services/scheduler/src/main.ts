// Wiring only: config → runtime (logger, metrics, db, broker, outbox relay, HTTP, graceful stop) → this
// service's own parts.
import { createServiceRuntime } from '@postline/platform';
import { loadConfig, SCHEMA } from './config.ts';
import type { SchedulerDb } from './db/schema.ts';

const config = loadConfig();
const runtime = createServiceRuntime<SchedulerDb>({ service: 'scheduler', schema: SCHEMA, config });
// The scheduler has no HTTP API of its own: timers arrive as commands.
await runtime.start({});
