// The platform's runtime entry: everything, including the parts that load express, amqplib and pg. Pure
// code (domain/) imports '@postline/platform/pure' instead, which loads none of them; this entry
// re-exports all of it.
export * from './pure.ts';
export { createLogger, REDACT_PATHS, type Logger } from './logger/logger.ts';
export { createDb, PREPARED, pingDb, isDatabaseUnavailable, reportDatabaseOutage, type DbOptions } from './db/db.ts';
export { outageLog, addressOf, type OutageLog, type Dependency } from './logger/outage-log.ts';
export {
  ensureDatabase,
  migrateToLatest,
  serviceMigrations,
  runMigrateCommand,
  type ServiceMigrations,
} from './db/migrations.ts';
export { paginate, type Page } from './db/pagination.ts';
export { escapeLike, firstIdAt } from './db/list-filters.ts';
export { deleteInBatches } from './db/delete-in-batches.ts';
export {
  createRetentionPruner,
  retentionPruneEveryMs,
  type RetainedTable,
  type RetentionPruner,
} from './retention/pruner.ts';
export {
  createTeamRetentionTable,
  readTeamRetention,
  saveTeamRetention,
  type TeamRetentionTable,
} from './retention/tables.ts';
export { teamRetentionRoutes, TEAM_RETENTION_PATH } from './retention/route.ts';
export { listenChannel, type ChannelListener, type ListenOptions } from './db/listen.ts';
export { sendDownload, headerSafeType, type Download as PublicDownload } from './http/download.ts';
export { readFormBody, type FormBodyLimits } from './http/form-body.ts';
export { declaresTooLarge, rawBodyTooLarge, readRawBody, type RawBodyLimit } from './http/raw-body.ts';
export {
  createHttpApp,
  route,
  listen,
  errorHandler,
  notFoundHandler,
  toApiError,
  type LargeBody,
  type HttpApp,
  type HttpAppOptions,
  type Listening,
  type ReadinessCheck,
} from './http/app.ts';
export { parseInput } from './http/validate.ts';
export { emailContentPolicy, setPublicLinkHeaders, type PublicLinkHeaders } from './http/public-link-headers.ts';
export { createSlots, once, waitInLine } from './concurrency/slots.ts';
export { createKeyedSlots, type KeyedSlots } from './concurrency/keyed-slots.ts';
export { createWorkerPool, type WorkerPool } from './concurrency/worker-pool.ts';
export {
  requireTeam,
  teamOf,
  TEAM_HEADER,
  KEY_HEADER,
  PERMISSION_HEADER,
  KEY_DOMAIN_HEADER,
  TEAM_MEMBERS_HEADER,
  IDEMPOTENCY_HEADER,
  IDEMPOTENCY_HASH_HEADER,
  REQUEST_LOG_HEADER,
  USER_HEADER,
  USER_ROLE_HEADER,
  userOf,
} from './http/internal.ts';
export { createMetrics, Counter, Gauge, Histogram, type Metrics } from './http/metrics.ts';
export { createLifecycle, type Lifecycle, type Stoppable } from './lifecycle/lifecycle.ts';
export { createWakeup, type Wakeup } from './lifecycle/wakeup.ts';
export { createIntervalJob, type IntervalJob } from './lifecycle/interval-job.ts';
export { collectAndShrink, createMemoryTrim, type MemoryProbe } from './lifecycle/memory-trim.ts';
export {
  createBroker,
  type Broker,
  type BrokerOptions,
  type PublishOptions,
  type PublishResult,
  type Setup,
} from './broker/broker.ts';
export { createConsumer } from './broker/consumer/consumer.ts';
export type { Consumer, ConsumerOptions, MatchingKeys, BatchOptions, BatchItem } from './broker/consumer/types.ts';
export { createBatcher, createBatchLoader, type Batcher, type BatcherOptions } from './broker/batcher.ts';
export { PermanentError, RetryLaterError, BrokerUnavailableError } from './broker/errors.ts';
export { redriveDeadLetters, queueDepth } from './broker/dead-letters.ts';
export { peekDeadLetters, describeDeadLetter, DEAD_HEADERS, type DeadLetter } from './broker/dead-letters.ts';
export {
  DEFAULT_RETRY_POLICY,
  RETRY_COUNT_HEADER,
  decideFailure,
  tierFor,
  type RetryPolicy,
  type DeadReason,
} from './broker/retry-policy.ts';
export {
  exchangeNames,
  consumerQueueNames,
  declareConsumerQueues,
  deadQueueName,
  topicMatches,
  DELIVERY_LIMIT,
  type Binding,
  type ExchangeKind,
  type ExchangeNames,
  type ConsumerQueueNames,
} from './broker/topology.ts';
export { brokerMetrics, type BrokerMetrics } from './broker/metrics.ts';
export {
  OUTBOX_TABLES_V1,
  createMessagingTables,
  outboxChannel,
  NOTIFY_RELAY,
  type MessagingTables,
  type OutboxTable,
  type InboxTable,
} from './outbox/tables.ts';
export { enqueue, enqueueEvent, enqueueCommand, outboxSource } from './outbox/enqueue.ts';
export { createOutboxRelay, type OutboxRelay, type OutboxRelayOptions } from './outbox/relay.ts';
export { createServiceRuntime, type BrokerConfig, type ServiceRuntime, type RuntimeConfig } from './service/runtime.ts';
