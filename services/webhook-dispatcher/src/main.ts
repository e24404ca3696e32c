// Wiring only: config → clients → servers and consumers, and one graceful shutdown.
import { createBroker, createDb, createHttpApp, createLifecycle, createLogger, createMetrics, createOutboxRelay, listen, pingDb } from '@postline/platform';
import { loadConfig, SCHEMA } from './config.ts';
import type { DispatcherDb } from './db/schema.ts';
import { internalRoutes } from './http/routes.ts';

const config = loadConfig();
const logger = createLogger({ service: 'webhook-dispatcher', level: config.LOG_LEVEL });
const metrics = createMetrics('webhook-dispatcher');
const { db } = createDb<DispatcherDb>({ url: config.DATABASE_URL, schema: SCHEMA, applicationName: 'webhook-dispatcher' });
const broker = createBroker({ url: config.AMQP_URL, prefix: config.BROKER_PREFIX, logger, metrics, connectionName: 'webhook-dispatcher' });
const relay = createOutboxRelay({ db, databaseUrl: config.DATABASE_URL, broker, logger, schema: SCHEMA });

const http = createHttpApp({
  logger,
  metrics,
  readiness: { postgres: () => pingDb(db), rabbitmq: () => broker.isConnected() },
  routes: (app) => app.use(internalRoutes()),
});

const lifecycle = createLifecycle({ logger, timeoutMs: config.SHUTDOWN_TIMEOUT_MS, onStopping: http.setShuttingDown });
// Stopped in reverse: HTTP first, then the relay, the broker connection, the pool.
lifecycle.add({ name: 'postgres', stop: () => db.destroy() });
lifecycle.add({ name: 'rabbitmq', stop: () => broker.stop() });
lifecycle.add({ name: 'outbox-relay', stop: () => relay.stop() });
// HTTP comes up first so that /healthz answers while RabbitMQ is still unreachable (/readyz says so).
const server = await listen(http.app, config.HTTP_PORT);
lifecycle.add({ name: 'http', stop: () => server.stop(config.SHUTDOWN_TIMEOUT_MS / 2) });
logger.info({ port: server.port }, 'webhook-dispatcher listening');
await broker.start();
await relay.start();
