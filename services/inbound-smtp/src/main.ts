// Wiring only: config → runtime (logger, metrics, db, broker, outbox relay, HTTP, graceful stop) → this
// service's own parts: the domain read model's consumer, the MX, the relay listeners.
import {
  createLinkSigner,
  createRetentionPruner,
  createServiceRuntime,
  readTeamRetention,
  retentionPruneEveryMs,
  teamRetentionRoutes,
  verpKeyOf,
} from '@postline/platform';
import { loadConfig, SCHEMA } from './config.ts';
import { createDomainStateConsumer } from './consumers/domain-state.ts';
import { findDomainsForHost, findLiveDomain } from './db/receiving-domains.ts';
import type { InboundDb } from './db/schema.ts';
import { internalRoutes } from './http/routes.ts';
import { createInboundMetrics } from './metrics.ts';
import { INBOUND_RETAINED_TABLES } from './db/retention.ts';
import { createDomainCache } from './smtp/mx-domains.ts';
import { DEFAULT_DMARC_LIMITS } from './domain/dmarc-report-reading.ts';
import { createDmarcReportReader } from './message-parsing/dmarc-report-reader.ts';
import { createAuthenticator, parseMessage } from './message-parsing/mx-message.ts';
import { createMxServer } from './smtp/mx-server.ts';
import { createRelayGateway } from './gateway/relay-gateway.ts';
import { createRelayServers } from './smtp/relay-server.ts';
import { loadTlsCredentials } from './tls/tls.ts';
import { receiveMessage } from './use-cases/receive-message.ts';

/** How long the MX trusts what it read of a domain: a verification change shows within this. */
const DOMAIN_CACHE_MS = 2000;

const config = loadConfig();
const runtime = createServiceRuntime<InboundDb>({ service: 'inbound-smtp', schema: SCHEMA, config });
const { logger, metrics } = runtime;
const inboundMetrics = createInboundMetrics(metrics.registry);
// One certificate for the MX's STARTTLS and both relay listeners.
const tls = await loadTlsCredentials(config, logger);
const { db, broker } = runtime;
const now = () => new Date();

// DMARC reports are read on a thread of their own, started when one arrives and stopped once idle.
const dmarcReader = createDmarcReportReader({ limits: DEFAULT_DMARC_LIMITS, logger });
// The MX: RCPT domains through a cache of a few seconds over the read model the domain-state consumer keeps.
const receiving = {
  db,
  parse: parseMessage,
  authenticate: createAuthenticator({
    servers: config.DNS_SERVERS,
    timeoutMs: config.DNS_TIMEOUT_MS,
    mta: config.INBOUND_MX_HOST,
  }),
  verpKey: verpKeyOf(config.POSTLINE_SECRET_KEY),
  mxHost: config.INBOUND_MX_HOST,
  readDmarcReports: dmarcReader.read,
  logger,
};
const mx = createMxServer({
  port: config.SMTP_MX_PORT,
  hostName: config.INBOUND_MX_HOST,
  tls,
  domains: createDomainCache((host) => findDomainsForHost(db, host), { ttlMs: DOMAIN_CACHE_MS }),
  reportDomain: (domainId) => findLiveDomain(db, domainId),
  receive: (message) => receiveMessage(receiving, message),
  metrics: inboundMetrics,
  logger,
  limits: { closeTimeoutMs: config.SHUTDOWN_TIMEOUT_MS / 2 },
  now,
});
const domainState = createDomainStateConsumer({ broker, db, logger });
const receivedEmails = {
  db,
  now,
  links: createLinkSigner(config.POSTLINE_SECRET_KEY),
  publicBaseUrl: config.PUBLIC_BASE_URL,
  mxHost: config.INBOUND_MX_HOST,
};

// The SMTP relay: an API client of the gateway (AUTH checked and each message submitted through it).
const relay = createRelayServers({
  ports: { starttls: config.SMTP_RELAY_PORT, implicitTls: config.SMTP_RELAY_TLS_PORT },
  hostName: config.INBOUND_MX_HOST,
  tls,
  gateway: createRelayGateway({ baseUrl: config.API_GATEWAY_URL }),
  metrics: inboundMetrics,
  logger,
  limits: { closeTimeoutMs: config.SHUTDOWN_TIMEOUT_MS / 2 },
  now,
});

await runtime.start({
  routes: (app) => {
    // Not an API route: the gateway's push of a team's retention, for this service's retention job.
    app.use(teamRetentionRoutes(db));
    app.use(internalRoutes(receivedEmails));
  },
  // Parts stop in reverse: the relay and the MX first (letting transactions in flight commit), then the DMARC
  // reading thread, the retention job and the consumer.
  parts: [
    { name: 'internal.domain.state', start: () => domainState.start(), stop: () => domainState.stop() },
    createRetentionPruner({
      db,
      logger,
      registry: metrics.registry,
      everyMs: retentionPruneEveryMs(config.POSTLINE_DELAY_SCALE),
      retentionOf: () => readTeamRetention(db),
      tables: INBOUND_RETAINED_TABLES,
    }),
    { name: 'dmarc-report-reader', start: () => undefined, stop: () => dmarcReader.close() },
    mx,
    relay,
  ],
});
