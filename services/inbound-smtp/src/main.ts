// Wiring only: config → runtime (logger, metrics, db, broker, outbox relay, HTTP, graceful stop) → this
// service's own parts: the domain read model's consumer, the MX, the relay listeners.
import { createServiceRuntime } from '@postline/platform';
import { loadConfig, SCHEMA } from './config.ts';
import type { InboundDb } from './db/schema.ts';
import { internalRoutes } from './http/routes.ts';
import { createInboundMetrics } from './metrics.ts';
import { loadTlsCredentials } from './smtp/tls.ts';

const config = loadConfig();
const runtime = createServiceRuntime<InboundDb>({ service: 'inbound-smtp', schema: SCHEMA, config });
const { logger, metrics } = runtime;
const inboundMetrics = createInboundMetrics(metrics.registry);
// One certificate for the MX's STARTTLS and both relay listeners.
const tls = await loadTlsCredentials(config, logger);
void inboundMetrics;
void tls;

// relay:begin (the relay's wiring)
// relay:end

await runtime.start({
  routes: (app) => app.use(internalRoutes()),
  parts: [
    // relay:parts:begin
    // relay:parts:end
  ],
});
