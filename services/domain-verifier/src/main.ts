// Wiring only: config → runtime (logger, metrics, db, broker, outbox relay, HTTP, graceful stop) → this
// service's own parts.
import { sql } from 'kysely';
import { Counter, createSecretBox, createServiceRuntime, Gauge, Histogram } from '@postline/platform';
import type { CheckDeps } from './checks.ts';
import { loadConfig, SCHEMA } from './config.ts';
import { createCheckDomainConsumer } from './consumers/check-domain.ts';
import type { DomainsDb } from './db/schema.ts';
import { createDnsLookup } from './dns.ts';
import { internalRoutes } from './http/routes.ts';

const config = loadConfig();
const runtime = createServiceRuntime<DomainsDb>({ service: 'domain-verifier', schema: SCHEMA, config });
const { db, logger, metrics, broker } = runtime;
const registers = [metrics.registry];

const deps: CheckDeps & { box: ReturnType<typeof createSecretBox> } = {
  db,
  logger,
  box: createSecretBox(config.POSTLINE_SECRET_KEY),
  dns: createDnsLookup({ servers: config.DNS_SERVERS, timeoutMs: config.DNS_TIMEOUT_MS }),
  infra: { inboundMxHost: config.INBOUND_MX_HOST.toLowerCase(), spfInclude: config.SPF_INCLUDE.toLowerCase() },
  scale: config.POSTLINE_DELAY_SCALE,
  metrics: {
    checks: new Counter({
      name: 'domain_checks_total',
      help: 'Domain verification checks by trigger and resulting domain status',
      labelNames: ['trigger', 'status'] as const,
      registers,
    }),
    lookupDuration: new Histogram({
      name: 'domain_dns_lookup_duration_seconds',
      help: 'DNS lookups of customer records by record type and outcome',
      labelNames: ['type', 'outcome'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
  },
};

new Gauge({
  name: 'domains',
  help: 'Domains by verification status',
  labelNames: ['status'] as const,
  registers,
  async collect() {
    const { rows } = await sql<{ status: string; n: number }>`select status, count(*)::int as n from domains group by status`.execute(db);
    this.reset();
    for (const row of rows) this.set({ status: row.status }, row.n);
  },
});

const checks = createCheckDomainConsumer({ ...deps, broker });
await runtime.start({
  routes: (app) => app.use(internalRoutes(deps)),
  parts: [{ name: 'check-domain consumer', start: () => checks.start(), stop: () => checks.stop() }],
});
