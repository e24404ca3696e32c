// Wiring only: config → runtime (logger, metrics, db, broker, outbox relay, HTTP, graceful stop) → this
// service's own parts.
import { createServiceRuntime } from '@postline/platform';
import { loadConfig, SCHEMA } from './config.ts';
import type { InboundDb } from './db/schema.ts';
import { internalRoutes } from './http/routes.ts';

const config = loadConfig();
const runtime = createServiceRuntime<InboundDb>({ service: 'inbound-smtp', schema: SCHEMA, config });
await runtime.start({ routes: (app) => app.use(internalRoutes()) });
