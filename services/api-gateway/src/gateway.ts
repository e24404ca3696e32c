// The api-gateway as one thing to start and stop, wired once for main.ts and for the tests: config and
// clients → the service runtime (logger, metrics, database, HTTP, graceful stop; no broker) → key caches,
// jobs and the public API, and with the dashboard's emails configured the notices to teams' admins (a
// RabbitMQ connection of their own, outside readiness).
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import {
  createBroker,
  createIntervalJob,
  createRetentionPruner,
  createServiceRuntime,
  outageLog,
  retentionPruneEveryMs,
  type Listening,
  type Logger,
  type Metrics,
} from '@postline/platform';
import { SCHEMA, type Env } from './config.ts';
import { createAdminNoticeConsumer } from './consumers/admin-notices.ts';
import { findApiKeyWithTeam } from './db/api-keys.ts';
import { pruneIdempotencyKeys } from './db/idempotency.ts';
import { createKeyCache } from './db/key-cache.ts';
import type { GatewayDb } from './db/schema.ts';
import { teamHasAccess, teamRetentionOverrides } from './db/teams.ts';
import type { Owners } from './domain/routes.ts';
import { gatewayHttp } from './http/app.ts';
import { createIdempotencyLeases } from './jobs/idempotency-leases.ts';
import { watchKeyChanges } from './jobs/key-change-listener.ts';
import { createKeyUsageTracker } from './jobs/key-usage.ts';
import { createNoticeMailer } from './jobs/notice-mailer.ts';
import { createRequestLogWriter } from './jobs/request-log-writer.ts';
import { createReputationSync } from './jobs/reputation-sync.ts';
import { createRetentionSync } from './jobs/retention-sync.ts';
import { createGatewayMetrics } from './metrics.ts';
import { createDashboardMail, type DashboardMail } from './owners/dashboard-mail.ts';
import { createDomainExists } from './owners/domain-exists.ts';
import { createTrackingHostCheck } from './owners/tracking-host.ts';
import { announceSetup } from './accounts/setup.ts';
import { createFormSubmitLimit } from './redis/form-submit-limit.ts';
import { createSignInLimit } from './redis/sign-in-limit.ts';

/** What the gateway talks to that its caller makes (a test gives a Redis client of its own). */
export type GatewayClients = {
  redis: Redis;
  now?: () => Date;
};

export type ApiGateway = {
  db: Kysely<GatewayDb>;
  /** Connects Redis (if it is not yet), listens, then starts the jobs; resolves with the listening server. */
  start: () => Promise<Listening>;
  /** The graceful stop SIGTERM makes: readiness false, then every part in reverse within the deadline. */
  stop: () => Promise<void>;
  /** Writes the buffered request logs and key usage now (they are otherwise written every 200 ms and 2 s). */
  flush: () => Promise<void>;
  /** True while the key-change LISTEN is in place: only then are keys served from the cache. */
  keyChangesListening: () => boolean;
  /** The one-time setup link logged at start when no user existed, else undefined. */
  setupLink: () => string | undefined;
};

/**
 * The api-gateway. `handleSignals: false` leaves the process to its caller (a test): no SIGTERM handler, and
 * `stop` is how it ends.
 */
export function createGateway(
  config: Readonly<Env>,
  clients: GatewayClients,
  opts: {
    handleSignals?: boolean;
    /** How long an idempotency key in flight holds unrenewed (IDEMPOTENCY_LEASE_MS unless a test shortens it). */
    idempotencyLeaseMs?: number;
  } = {},
): ApiGateway {
  const runtime = createServiceRuntime<GatewayDb>({
    service: 'api-gateway',
    schema: SCHEMA,
    config: { ...config, HTTP_PORT: config.API_PORT },
    broker: 'none',
    dbPoolSize: 20,
    handleSignals: opts.handleSignals,
  });
  const { db, logger, metrics } = runtime;
  const { redis } = clients;
  // ioredis reconnects by itself; an outage is one clear line, then one a minute, not a line per retry.
  const redisOutage = outageLog(logger, 'Redis', config.REDIS_URL);
  redis.on('error', (err: Error) => redisOutage.failed(err));
  redis.on('ready', () => redisOutage.recovered());
  const owners: Owners = {
    sender: config.SENDER_URL,
    'inbound-smtp': config.INBOUND_SMTP_URL,
    'webhook-dispatcher': config.WEBHOOK_DISPATCHER_URL,
    'domain-verifier': config.DOMAIN_VERIFIER_URL,
  };
  const now = clients.now ?? (() => new Date());
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
  const idempotencyLeases = createIdempotencyLeases({ db, logger, leaseMs: opts.idempotencyLeaseMs });
  const idempotencyPrune = createIntervalJob({
    name: 'idempotency-prune',
    everyMs: 60_000,
    run: () => pruneIdempotencyKeys(db),
    logger,
  });
  const mail = createDashboardMail({
    senderUrl: config.SENDER_URL,
    from: config.DASHBOARD_MAIL_FROM,
    teamId: config.DASHBOARD_MAIL_TEAM_ID,
    logger,
  });
  const notices = mail ? noticeParts({ config, db, logger, metrics, mail }) : [];
  // Request logs and the notices emailed to admins outlive no team's retention (a notice not sent by then is
  // given up); idempotency records go after 24 hours (above), well within it.
  const retentionPrune = createRetentionPruner({
    db,
    logger,
    registry: metrics.registry,
    everyMs: retentionPruneEveryMs(config.POSTLINE_DELAY_SCALE),
    retentionOf: () => teamRetentionOverrides(db),
    tables: [
      { table: 'request_logs', time: 'created_at' },
      // One row per notice and person: (message_id, user_id) is its key, so its rows are named by their place.
      { table: 'notice_emails', time: 'created_at', key: 'ctid' },
    ],
  });
  const retentionSync = createRetentionSync({
    db,
    logger,
    owners: [config.SENDER_URL, config.INBOUND_SMTP_URL, config.WEBHOOK_DISPATCHER_URL],
    everyMs: Math.max(200, 5000 * config.POSTLINE_DELAY_SCALE),
  });
  // The reputation guard's lines the operator set for a team, pushed to the sender the same way.
  const reputationSync = createReputationSync({
    db,
    logger,
    sender: config.SENDER_URL,
    everyMs: Math.max(200, 5000 * config.POSTLINE_DELAY_SCALE),
  });
  const http = gatewayHttp({
    db,
    redis,
    redisPrefix: config.REDIS_PREFIX,
    logger,
    gatewayMetrics: createGatewayMetrics(metrics.registry),
    owners,
    domainExists: createDomainExists(owners),
    isTrackingHost: createTrackingHostCheck(owners),
    rateLimitPerSecond: config.RATE_LIMIT_PER_SECOND,
    publicLinkPerSecond: config.PUBLIC_LINK_RATE_LIMIT_PER_SECOND,
    trustedProxyHops: config.TRUSTED_PROXY_HOPS,
    formSubmitLimit: createFormSubmitLimit({
      redis,
      prefix: config.REDIS_PREFIX,
      logger,
      perAddressPerMinute: config.FORM_SUBMITS_PER_ADDRESS_PER_MINUTE,
      perFormPerMinute: config.FORM_SUBMITS_PER_FORM_PER_MINUTE,
    }),
    requestLogs,
    markKeyUsed: keyUsage.markUsed,
    idempotencyLeases,
    keys,
    teamAccess,
    now,
    sessions: {
      publicBaseUrl: config.PUBLIC_BASE_URL,
      idleMs: config.SESSION_IDLE_MINUTES * 60_000,
      maxAgeMs: config.SESSION_MAX_AGE_HOURS * 3_600_000,
      signIn: createSignInLimit({
        redis,
        prefix: config.REDIS_PREFIX,
        logger,
        attemptsPerAddress: config.SIGN_IN_ATTEMPTS_PER_ADDRESS,
        failuresPerAccount: config.SIGN_IN_FAILURES_PER_ACCOUNT,
      }),
      mail,
    },
  });
  let setupLink: string | undefined;

  return {
    db,
    async start() {
      // Counters may be lost, requests may not wait: a Redis not reachable yet is skipped, not waited for.
      if (redis.status === 'wait') {
        await redis.connect().catch((err: unknown) => redisOutage.failed(err));
      }
      // Parts stop in reverse: HTTP first (the runtime's), then the leases of keys in flight, the pruner, the
      // buffered writes (flushed), Redis and the key-change LISTEN; the database pool last.
      const listening = await runtime.start({
        ...http,
        parts: [
          { name: 'key-changes', start: () => undefined, stop: () => keyWatch.stop() },
          { name: 'redis', start: () => undefined, stop: () => void redis.disconnect() },
          { name: 'request-logs', start: requestLogs.start, stop: requestLogs.stop },
          { name: 'key-usage', start: keyUsage.start, stop: keyUsage.stop },
          idempotencyPrune,
          retentionPrune,
          retentionSync,
          reputationSync,
          ...notices,
          // Stopped right after HTTP: a request in flight keeps its key's lease until it is answered.
          idempotencyLeases.part,
        ],
      });
      // A database that cannot answer yet is no reason not to serve API keys: the link waits for the next start.
      setupLink = await announceSetup({ db, logger, publicBaseUrl: config.PUBLIC_BASE_URL, now }).catch(
        (err: unknown) => {
          logger.error({ err }, 'could not check for a first account; no setup link this time');
          return undefined;
        },
      );
      return listening;
    },
    stop: () => runtime.lifecycle.shutdown('stop'),
    async flush() {
      await requestLogs.flush();
      await keyUsage.flush();
    },
    keyChangesListening: () => keyWatch.isListening(),
    setupLink: () => setupLink,
  };
}

/**
 * With the dashboard's emails configured, the notices to a team's admins: a RabbitMQ connection of the
 * gateway's own for `internal.webhook.disabled` and `internal.reputation.paused`, and the mailer that sends
 * them. The connection is not part
 * of readiness and is not waited for: the API serves while RabbitMQ is away, and the notices wait in their
 * queue (the broker reconnects by itself). Without the emails configured the gateway has no connection at all.
 */
function noticeParts(deps: {
  config: Readonly<Env>;
  db: Kysely<GatewayDb>;
  logger: Logger;
  metrics: Metrics;
  mail: DashboardMail;
}): { name: string; start: () => Promise<void> | void; stop: () => Promise<void> | void }[] {
  const { config, db, logger, metrics } = deps;
  const broker = createBroker({
    url: config.AMQP_URL,
    prefix: config.BROKER_PREFIX,
    logger,
    metrics,
    connectionName: 'api-gateway',
  });
  const mailer = createNoticeMailer({ db, mail: deps.mail, logger });
  const consumer = createAdminNoticeConsumer({
    db,
    broker,
    logger,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    noticesAdded: mailer.kick,
  });
  return [
    {
      name: 'rabbitmq',
      start: () => void broker.start().catch((err: unknown) => logger.error({ err }, 'RabbitMQ did not start')),
      stop: () => broker.stop(),
    },
    { name: 'admin-notices', start: () => consumer.start(), stop: () => consumer.stop() },
    mailer,
  ];
}
