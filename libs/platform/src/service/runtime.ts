import { flushCompileCache } from 'node:module';
import type { Express } from 'express';
import type { Kysely } from 'kysely';
import { createBroker, type Broker } from '../broker/broker.ts';
import { createDb, pingDb } from '../db/db.ts';
import { createHttpApp, listen, type LargeBody, type Listening, type ReadinessCheck } from '../http/app.ts';
import { createMetrics, type Metrics } from '../http/metrics.ts';
import { createLifecycle, type Lifecycle, type Stoppable } from '../lifecycle/lifecycle.ts';
import { createLogger, type Logger } from '../logger/logger.ts';
import { createMemoryTrim } from '../lifecycle/memory-trim.ts';
import { createOutboxRelay } from '../outbox/relay.ts';

/** The variables every service's runtime reads (parsed by the service's own config.ts). */
export type RuntimeConfig = {
  LOG_LEVEL: string;
  DATABASE_URL: string;
  DATABASE_POOL_SIZE?: number;
  SHUTDOWN_TIMEOUT_MS: number;
  HTTP_PORT: number;
};

/** The variables the runtime of a service with a broker connection reads besides. */
export type BrokerConfig = {
  AMQP_URL: string;
  BROKER_PREFIX: string;
};

export type ServiceRuntime<DB, B extends Broker | undefined = Broker> = {
  logger: Logger;
  metrics: Metrics;
  db: Kysely<DB>;
  /** The broker connection; undefined for a service without one (the api-gateway). */
  broker: B;
  lifecycle: Lifecycle;
  /**
   * Brings the service up: HTTP first (so /healthz answers while RabbitMQ is unreachable; /readyz says
   * so), then the broker connection and the outbox relay (when the service has a broker) and the given
   * parts (consumers, jobs), and last, in a process of its own, the idle memory trim (createMemoryTrim).
   * Everything stops in reverse on SIGTERM: HTTP, parts, relay, broker, pool. Returns the listening server.
   */
  start: (opts: {
    routes?: (app: Express) => void;
    /** Middleware before the JSON body parser (createHttpApp's `before`: the gateway authenticates first). */
    before?: (app: Express) => void;
    /** Checks for /readyz besides the runtime's own (postgres, and rabbitmq when there is a broker). */
    readiness?: Record<string, ReadinessCheck>;
    /** Routes whose JSON bodies may be larger than the usual 50 MB (createHttpApp's largeBodies). */
    largeBodies?: readonly LargeBody[];
    parts?: (Stoppable & { start: () => Promise<void> | void })[];
  }) => Promise<Listening>;
};

type RuntimeOptions = {
  service: string;
  schema: string;
  /** Outbox rows the relay claims and publishes per transaction (default 100): raise it for bursts. */
  relayBatchSize?: number;
  /** Connections in the database pool (createDb's default unless given). */
  dbPoolSize?: number;
  /**
   * false when the caller owns the process (a test starting the service in its own): no SIGTERM/SIGINT
   * handler (stop it with `lifecycle.shutdown`), and a shutdown past its deadline is logged, not an exit.
   */
  handleSignals?: boolean;
};

/**
 * The plumbing every service shares (logger, metrics, database, HTTP with health routes, one graceful
 * stop) and, unless `broker: 'none'`, the broker connection and the outbox relay; main.ts adds its own
 * parts.
 *
 * @example
 * const runtime = createServiceRuntime<SenderDb>({ service: 'sender', schema: SCHEMA, config });
 * const gateway = createServiceRuntime<GatewayDb>({ service: 'api-gateway', schema, config, broker: 'none' });
 */
export function createServiceRuntime<DB>(
  opts: RuntimeOptions & { config: RuntimeConfig & BrokerConfig; broker?: 'amqp' },
): ServiceRuntime<DB>;
export function createServiceRuntime<DB>(
  opts: RuntimeOptions & { config: RuntimeConfig; broker: 'none' },
): ServiceRuntime<DB, undefined>;
export function createServiceRuntime<DB>(
  opts: RuntimeOptions & { config: RuntimeConfig & Partial<BrokerConfig>; broker?: 'amqp' | 'none' },
): ServiceRuntime<DB, Broker | undefined> {
  const { config, service } = opts;
  const logger = createLogger({ service, level: config.LOG_LEVEL });
  const metrics = createMetrics(service);
  const { db } = createDb<DB>({
    url: config.DATABASE_URL,
    schema: opts.schema,
    applicationName: service,
    logger,
    max: config.DATABASE_POOL_SIZE ?? opts.dbPoolSize,
  });
  const brokered = opts.broker === 'none' ? undefined : connectBroker(opts, config, { db, logger, metrics });
  let setShuttingDown = () => undefined as void;
  const lifecycle = createLifecycle({
    logger,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    onStopping: () => setShuttingDown(),
    handleSignals: opts.handleSignals,
    exit: opts.handleSignals === false ? () => undefined : undefined,
  });

  return {
    logger,
    metrics,
    db,
    broker: brokered?.broker,
    lifecycle,
    async start(startOpts) {
      const http = createHttpApp({
        logger,
        metrics,
        readiness: {
          postgres: () => pingDb(db),
          ...(brokered && { rabbitmq: () => brokered.broker.isConnected() }),
          ...startOpts.readiness,
        },
        routes: startOpts.routes ?? (() => undefined),
        before: startOpts.before,
        largeBodies: startOpts.largeBodies,
      });
      setShuttingDown = http.setShuttingDown;
      lifecycle.add({ name: 'postgres', stop: () => db.destroy() });
      if (brokered) {
        lifecycle.add({ name: 'rabbitmq', stop: () => brokered.broker.stop() });
        lifecycle.add({ name: 'outbox-relay', stop: () => brokered.relay.stop() });
      }
      for (const part of startOpts.parts ?? []) lifecycle.add(part);
      const server = await listen(http.app, config.HTTP_PORT);
      lifecycle.add({ name: 'http', stop: () => server.stop(config.SHUTDOWN_TIMEOUT_MS / 2) });
      logger.info({ port: server.port }, `${service} listening`);
      if (brokered) {
        await brokered.broker.start();
        // Stopped before the broker ever answered: the rest must not start on a closed pool.
        if (lifecycle.stopping) return server;
        await brokered.relay.start();
      }
      for (const part of startOpts.parts ?? []) await part.start();
      // Only a process the service owns: a test's process holding several services is not theirs to trim.
      if (opts.handleSignals !== false) {
        // The modules compiled so far go to NODE_COMPILE_CACHE now, not only at a clean exit: a process
        // killed or stopped hard still leaves the next start its compiled code, and Node's TypeScript
        // stripper (about 20 MB a process) is then not loaded at all, every module's code being found there.
        flushCompileCache();
        const trim = createMemoryTrim({ logger, metrics });
        lifecycle.add(trim);
        trim.start();
      }
      return server;
    },
  };
}

function connectBroker<DB>(
  opts: RuntimeOptions,
  config: Partial<BrokerConfig> & RuntimeConfig,
  clients: { db: Kysely<DB>; logger: Logger; metrics: Metrics },
) {
  if (config.AMQP_URL === undefined || config.BROKER_PREFIX === undefined) {
    throw new Error(`${opts.service}: AMQP_URL and BROKER_PREFIX are required unless broker is 'none'`);
  }
  const { db, logger, metrics } = clients;
  const broker = createBroker({
    url: config.AMQP_URL,
    prefix: config.BROKER_PREFIX,
    logger,
    metrics,
    connectionName: opts.service,
  });
  const relay = createOutboxRelay({
    db,
    databaseUrl: config.DATABASE_URL,
    broker,
    logger,
    schema: opts.schema,
    batchSize: opts.relayBatchSize,
  });
  return { broker, relay };
}
