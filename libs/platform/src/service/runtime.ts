import type { Express } from 'express';
import type { Kysely } from 'kysely';
import { createBroker, type Broker } from '../broker/broker.ts';
import { createDb, pingDb } from '../db/db.ts';
import { createHttpApp, listen, type LargeBody, type ReadinessCheck } from '../http/app.ts';
import { createMetrics, type Metrics } from '../http/metrics.ts';
import { createLifecycle, type Lifecycle, type Stoppable } from '../lifecycle/lifecycle.ts';
import { createLogger, type Logger } from '../logger/logger.ts';
import { createOutboxRelay } from '../outbox/relay.ts';

/** The variables a brokered service's runtime reads (parsed by the service's own config.ts). */
export type RuntimeConfig = {
  LOG_LEVEL: string;
  DATABASE_URL: string;
  AMQP_URL: string;
  BROKER_PREFIX: string;
  SHUTDOWN_TIMEOUT_MS: number;
  HTTP_PORT: number;
};

export type ServiceRuntime<DB> = {
  logger: Logger;
  metrics: Metrics;
  db: Kysely<DB>;
  broker: Broker;
  lifecycle: Lifecycle;
  /**
   * Brings the service up: HTTP first (so /healthz answers while RabbitMQ is unreachable; /readyz says
   * so), then the broker connection, the outbox relay and the given parts (consumers). Everything stops
   * in reverse on SIGTERM: HTTP, parts, relay, broker, pool.
   */
  start: (opts: {
    routes?: (app: Express) => void;
    readiness?: Record<string, ReadinessCheck>;
    /** Routes whose JSON bodies may be larger than the usual 50 MB (createHttpApp's largeBodies). */
    largeBodies?: readonly LargeBody[];
    parts?: (Stoppable & { start: () => Promise<void> | void })[];
  }) => Promise<void>;
};

/** The plumbing every service with a schema and a broker connection shares; main.ts adds its own parts. */
export function createServiceRuntime<DB>(opts: {
  service: string;
  schema: string;
  config: RuntimeConfig;
  /** Outbox rows the relay claims and publishes per transaction (default 100): raise it for bursts. */
  relayBatchSize?: number;
}): ServiceRuntime<DB> {
  const { config, service } = opts;
  const logger = createLogger({ service, level: config.LOG_LEVEL });
  const metrics = createMetrics(service);
  const { db } = createDb<DB>({ url: config.DATABASE_URL, schema: opts.schema, applicationName: service, logger });
  const broker = createBroker({
    url: config.AMQP_URL,
    prefix: config.BROKER_PREFIX,
    logger,
    metrics,
    connectionName: service,
  });
  const relay = createOutboxRelay({
    db,
    databaseUrl: config.DATABASE_URL,
    broker,
    logger,
    schema: opts.schema,
    batchSize: opts.relayBatchSize,
  });
  let setShuttingDown = () => undefined as void;
  const lifecycle = createLifecycle({
    logger,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    onStopping: () => setShuttingDown(),
  });

  return {
    logger,
    metrics,
    db,
    broker,
    lifecycle,
    async start(startOpts) {
      const http = createHttpApp({
        logger,
        metrics,
        readiness: { postgres: () => pingDb(db), rabbitmq: () => broker.isConnected(), ...startOpts.readiness },
        routes: startOpts.routes ?? (() => undefined),
        largeBodies: startOpts.largeBodies,
      });
      setShuttingDown = http.setShuttingDown;
      lifecycle.add({ name: 'postgres', stop: () => db.destroy() });
      lifecycle.add({ name: 'rabbitmq', stop: () => broker.stop() });
      lifecycle.add({ name: 'outbox-relay', stop: () => relay.stop() });
      for (const part of startOpts.parts ?? []) lifecycle.add(part);
      const server = await listen(http.app, config.HTTP_PORT);
      lifecycle.add({ name: 'http', stop: () => server.stop(config.SHUTDOWN_TIMEOUT_MS / 2) });
      logger.info({ port: server.port }, `${service} listening`);
      await broker.start();
      // Stopped before the broker ever answered: the rest must not start on a closed pool.
      if (lifecycle.stopping) return;
      await relay.start();
      for (const part of startOpts.parts ?? []) await part.start();
    },
  };
}
