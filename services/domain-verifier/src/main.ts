// Wiring only: config → runtime (logger, metrics, db, broker, outbox relay, HTTP, graceful stop) → this
// service's own parts.
import { createSecretBox, createServiceRuntime } from '@postline/platform';
import { loadConfig, SCHEMA } from './config.ts';
import { createCheckDomainConsumer } from './consumers/check-domain.ts';
import { countDomainsPerStatus } from './db/domains.ts';
import type { DomainsDb } from './db/schema.ts';
import { createDnsLookup } from './dns/lookup.ts';
import type { DomainRouteDeps } from './http/domains.ts';
import { internalRoutes } from './http/routes.ts';
import { createDomainVerifierMetrics } from './metrics.ts';

const config = loadConfig();
const runtime = createServiceRuntime<DomainsDb>({ service: 'domain-verifier', schema: SCHEMA, config });
const { db, logger, broker } = runtime;

const deps: DomainRouteDeps = {
  db,
  logger,
  box: createSecretBox(config.POSTLINE_SECRET_KEY),
  dns: createDnsLookup({ servers: config.DNS_SERVERS, timeoutMs: config.DNS_TIMEOUT_MS }),
  infra: {
    inboundMxHost: config.INBOUND_MX_HOST.toLowerCase(),
    spfInclude: config.SPF_INCLUDE.toLowerCase(),
    trackingHost: config.TRACKING_HOST.toLowerCase(),
  },
  scale: config.POSTLINE_DELAY_SCALE,
  metrics: createDomainVerifierMetrics(runtime.metrics.registry, () => countDomainsPerStatus(db)),
};

const checks = createCheckDomainConsumer({ ...deps, broker });
await runtime.start({
  routes: (app) => app.use(internalRoutes(deps)),
  parts: [{ name: 'domain-verifier.check-domain', start: () => checks.start(), stop: () => checks.stop() }],
});
