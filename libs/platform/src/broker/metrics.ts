import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export type QueueKind = 'work' | 'retry' | 'dead' | 'unroutable';

/** Something that reads a gauge's value at scrape time; sources are added by brokers, consumers and relays. */
type QueueSource = { queue: string; kind: QueueKind; depth: () => Promise<number | undefined> };
type OutboxSource = { schema: string; read: () => Promise<{ pending: number; oldestAgeSeconds: number }> };

export type BrokerMetrics = {
  published: Counter<'exchange' | 'result'>;
  retried: Counter<'consumer'>;
  deadLettered: Counter<'consumer' | 'reason'>;
  handleDuration: Histogram<'consumer' | 'outcome'>;
  /** Messages per committed batch transaction (consumers with `batch`). */
  batchSize: Histogram<'consumer'>;
  /** Batch transactions that failed, after which their messages were handled one by one. */
  batchFallbacks: Counter<'consumer'>;
  /** Records of a prepared result tried again after their transaction failed (`recordRetriesMs`). */
  recordRetries: Counter<'consumer'>;
  /** Copies of a message that shared the prepare of a copy still in flight in the same process. */
  sharedPrepares: Counter<'consumer'>;
  /** Registers a queue whose depth is read on every scrape; returns the function that removes it. */
  watchQueue(source: QueueSource): () => void;
  watchOutbox(source: OutboxSource): () => void;
};

// Several brokers, consumers and relays of one process share the service's registry, and prom-client
// refuses a second metric of the same name, so the set is created once per registry.
const byRegistry = new WeakMap<Registry, BrokerMetrics>();

export function brokerMetrics(registry: Registry): BrokerMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  const queues = new Set<QueueSource>();
  const outboxes = new Set<OutboxSource>();
  const registers = [registry];

  new Gauge({
    name: 'broker_queue_messages',
    help: 'Messages ready in a consumer queue (kind=work), its delay tiers (kind=retry), its dead-letter queue (kind=dead) or the unroutable queue',
    labelNames: ['queue', 'kind'] as const,
    registers,
    async collect() {
      this.reset();
      const depths = await Promise.all([...queues].map(async (q) => ({ q, depth: await q.depth() })));
      for (const { q, depth } of depths) if (depth !== undefined) this.set({ queue: q.queue, kind: q.kind }, depth);
    },
  });
  // Each gauge reads on its own scrape hook: prom-client collects a metric only when that metric is read.
  const readOutboxes = async () => {
    const reads = await Promise.all(
      [...outboxes].map(async (source) => ({
        schema: source.schema,
        read: await source.read().catch(() => undefined),
      })),
    );
    // Database unreachable: no sample rather than a stale one; readiness reports the outage.
    return reads.flatMap(({ schema, read }) => (read ? [{ schema, ...read }] : []));
  };
  new Gauge({
    name: 'outbox_pending_messages',
    help: 'Outbox rows not yet confirmed by the broker',
    labelNames: ['schema'] as const,
    registers,
    async collect() {
      this.reset();
      for (const read of await readOutboxes()) this.set({ schema: read.schema }, read.pending);
    },
  });
  new Gauge({
    name: 'outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest unpublished outbox row (publish lag); 0 when none is pending',
    labelNames: ['schema'] as const,
    registers,
    async collect() {
      this.reset();
      for (const read of await readOutboxes()) this.set({ schema: read.schema }, read.oldestAgeSeconds);
    },
  });

  const metrics: BrokerMetrics = {
    published: new Counter({
      name: 'broker_messages_published_total',
      help: 'Messages published with confirms, by exchange and result (ok, returned, nacked, timeout, closed, disconnected)',
      labelNames: ['exchange', 'result'] as const,
      registers,
    }),
    retried: new Counter({
      name: 'broker_messages_retried_total',
      help: 'Messages sent to a delay tier after a failed handling',
      labelNames: ['consumer'] as const,
      registers,
    }),
    deadLettered: new Counter({
      name: 'broker_messages_dead_lettered_total',
      help: 'Messages moved to a dead-letter queue, by reason (invalid, permanent, exhausted)',
      labelNames: ['consumer', 'reason'] as const,
      registers,
    }),
    handleDuration: new Histogram({
      name: 'broker_message_handle_duration_seconds',
      help: 'Time from delivery to ack, by outcome (ok, duplicate, retried, dead_lettered, requeued)',
      labelNames: ['consumer', 'outcome'] as const,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    batchSize: new Histogram({
      name: 'broker_batch_messages',
      help: 'Messages handled in one committed batch transaction',
      labelNames: ['consumer'] as const,
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers,
    }),
    batchFallbacks: new Counter({
      name: 'broker_batch_fallbacks_total',
      help: 'Batch transactions that failed, after which each of their messages was handled on its own',
      labelNames: ['consumer'] as const,
      registers,
    }),
    recordRetries: new Counter({
      name: 'broker_record_retries_total',
      help: 'Transactions recording a prepared result (a delivery made) tried again after they failed',
      labelNames: ['consumer'] as const,
      registers,
    }),
    sharedPrepares: new Counter({
      name: 'broker_shared_prepares_total',
      help: 'Copies of a message (a redelivery, an outbox publishing again) that shared the prepare of a copy in flight instead of repeating it',
      labelNames: ['consumer'] as const,
      registers,
    }),
    watchQueue(source) {
      queues.add(source);
      return () => queues.delete(source);
    },
    watchOutbox(source) {
      outboxes.add(source);
      return () => outboxes.delete(source);
    },
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
