// Wiring only: config → clients → app → server, and one graceful shutdown.
import { Redis } from 'ioredis';
import {
  createDb,
  createIntervalJob,
  createLifecycle,
  createLogger,
  createMetrics,
  listen,
  outageLog,
} from '@postline/platform';
import { loadConfig, SCHEMA } from './config.ts';
import { findApiKeyWithTeam } from './db/api-keys.ts';
import { pruneIdempotencyKeys } from './db/idempotency.ts';
import { createKeyCache } from './db/key-cache.ts';
import type { GatewayDb } from './db/schema.ts';
import { teamHasAccess } from './db/teams.ts';
import type { Owners } from './domain/routes.ts';
import { createGatewayApp } from './http/app.ts';
import { watchKeyChanges } from './jobs/key-change-listener.ts';
import { createKeyUsageTracker } from './jobs/key-usage.ts';
import { createRequestLogWriter } from './jobs/request-log-writer.ts';
import { createGatewayMetrics } from './metrics.ts';
import { createDomainExists } from './owners/domain-exists.ts';

const config = loadConfig();
const logger = createLogger({ service: 'api-gateway', level: config.LOG_LEVEL });
const metrics = createMetrics('api-gateway');
const { db } = createDb<GatewayDb>({
  url: config.DATABASE_URL,
  schema: SCHEMA,
  max: 20,
  applicationName: 'api-gateway',
});
// Counters may be lost, requests may not wait: a Redis that does not answer within 250 ms is skipped.
// Auto-pipelining sends the rate-limit calls of requests handled in the same turn with one write.
const redis = new Redis(config.REDIS_URL, {
  maxRetriesPerRequest: 1,
  enableOfflineQueue: false,
  lazyConnect: true,
  commandTimeout: 250,
  enableAutoPipelining: true,
});
// ioredis reconnects by itself; an outage is one clear line, then one a minute, not a line per retry.
const redisOutage = outageLog(logger, 'Redis', config.REDIS_URL);
redis.on('error', (err: Error) => redisOutage.failed(err));
redis.on('ready', () => redisOutage.recovered());
await redis.connect().catch((err: unknown) => redisOutage.failed(err));

const owners: Owners = {
  sender: config.SENDER_URL,
  'inbound-smtp': config.INBOUND_SMTP_URL,
  'webhook-dispatcher': config.WEBHOOK_DISPATCHER_URL,
  'domain-verifier': config.DOMAIN_VERIFIER_URL,
};
const requestLogs = createRequestLogWriter({ db, logger });
// Keys are cached only while the key-change LISTEN is in place; until then every request reads Postgres.
const keys = createKeyCache({ load: (hash) => findApiKeyWithTeam(db, hash) });
// A team's access, asked by every key-less public link (tracking redirects among them), kept the same way.
const teamAccess = createKeyCache<boolean>({ load: (teamId) => teamHasAccess(db, teamId) });
const keyWatch = watchKeyChanges({
  databaseUrl: config.DATABASE_URL,
  schema: SCHEMA,
  logger,
  caches: [keys, teamAccess],
});
const keyUsage = createKeyUsageTracker({ db, logger });
const idempotencyPrune = createIntervalJob({
  name: 'idempotency-prune',
  everyMs: 60_000,
  run: () => pruneIdempotencyKeys(db),
  logger,
});
const http = createGatewayApp({
  db,
  redis,
  redisPrefix: config.REDIS_PREFIX,
  logger,
  metrics,
  gatewayMetrics: createGatewayMetrics(metrics.registry),
  owners,
  domainExists: createDomainExists(owners),
  rateLimitPerSecond: config.RATE_LIMIT_PER_SECOND,
  publicLinkPerSecond: config.PUBLIC_LINK_RATE_LIMIT_PER_SECOND,
  requestLogs,
  markKeyUsed: keyUsage.markUsed,
  keys,
  teamAccess,
  now: () => new Date(),
});

const lifecycle = createLifecycle({ logger, timeoutMs: config.SHUTDOWN_TIMEOUT_MS, onStopping: http.setShuttingDown });
lifecycle.add({ name: 'postgres', stop: () => db.destroy() });
lifecycle.add({ name: 'key-changes', stop: () => keyWatch.stop() });
lifecycle.add({ name: 'redis', stop: () => void redis.disconnect() });
requestLogs.start();
lifecycle.add({ name: 'request-logs', stop: requestLogs.stop });
keyUsage.start();
lifecycle.add({ name: 'key-usage', stop: keyUsage.stop });
idempotencyPrune.start();
lifecycle.add(idempotencyPrune);
const server = await listen(http.app, config.API_PORT);
lifecycle.add({ name: 'http', stop: () => server.stop(config.SHUTDOWN_TIMEOUT_MS / 2) });
logger.info({ port: server.port }, 'api-gateway listening');
