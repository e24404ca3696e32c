import type { Channel, ConsumeMessage } from 'amqplib';
import type { Message } from '@postline/contracts';
import { createBatcher, type Batcher } from '../batcher.ts';
import { queueDepth } from '../dead-letters.ts';
import { checkRetryPolicy, DEFAULT_RETRY_POLICY, type RetryPolicy } from '../retry-policy.ts';
import { consumerQueueNames } from '../topology.ts';
import { createConsumerChannel } from './channel.ts';
import { createCommits, type Ready } from './commit.ts';
import { decode, retryCount } from './decode.ts';
import { createFailureRouting } from './failure-routing.ts';
import { createSharedPrepares, type Share } from './shared-prepare.ts';
import type { Consumer, ConsumerOptions, MatchingKeys, Outcome } from './types.ts';

/**
 * A typed, idempotent consumer on its own quorum queue with delay-tier retries and a dead-letter queue.
 * Envelopes and data are validated against the contracts catalog before the handler sees them; an invalid
 * message is dead-lettered at once.
 *
 * A delivery goes: decode (invalid: dead letter), prepare (shared with a copy in flight), then its own
 * transaction or a batch's (commit.ts), and on failure a retry tier or the dead letter (failure-routing.ts),
 * on the channel that channel.ts keeps open.
 *
 * @example
 * const consumer = createConsumer({
 *   broker, db, service: 'webhook-dispatcher', name: 'email-events',
 *   bindings: [{ exchange: 'events', routingKey: 'email.*' }],
 *   handle: async (message, trx) => { await recordEvent(trx, message.team_id, message); },
 * });
 * await consumer.start();
 */
export function createConsumer<DB, P extends string, Prepared = undefined>(
  opts: ConsumerOptions<DB, P, Prepared>,
): Consumer {
  const { broker } = opts;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...opts.retry };
  checkRetryPolicy(policy);
  const queues = consumerQueueNames(broker.prefix, opts.service, opts.name, policy.tiersMs);
  const consumerId = `${opts.service}.${opts.name}`;
  const useInbox = opts.inbox ?? true;
  const log = (opts.logger ?? broker.logger).child({ consumer: consumerId });
  const metrics = broker.metrics;
  const stopTimeoutMs = opts.stopTimeoutMs ?? 10_000;
  // The handlers see the message typed by their bindings; decode has checked that it matches one.
  type Typed = Message<MatchingKeys<P>>;

  let stopping = false;
  let inFlight = 0;
  let onIdle: (() => void) | undefined;
  const cleanups: Array<() => void> = [];

  const channel = createConsumerChannel({
    broker,
    queues,
    bindings: opts.bindings,
    prefetch: opts.prefetch ?? 16,
    log,
    deliver: (ch, msg) => void deliver(ch, msg),
  });
  const { settle } = channel;
  const failures = createFailureRouting({ broker, queues, policy, consumerId, log, settle });
  const prepare = opts.prepare;
  const shares = createSharedPrepares<Prepared>({
    prepare: prepare && ((message, delivery) => prepare(message as Typed, delivery)),
    discard: opts.discard,
    useInbox,
    consumerId,
    metrics,
    log,
  });
  const batchHandle = opts.batch?.handle;
  const commits = createCommits<DB, Prepared>({
    db: opts.db,
    consumerId,
    useInbox,
    handle: (message, trx, prepared) => opts.handle(message as Typed, trx, prepared),
    batchHandle: batchHandle && ((items, trx) => batchHandle(items as { message: Typed; prepared: Prepared }[], trx)),
    recordRetriesMs: opts.recordRetriesMs,
    isStopping: () => stopping,
    log,
    metrics,
    settle,
    shares,
    failures,
  });
  const batcher: Batcher<Ready<Prepared>> | undefined = opts.batch
    ? createBatcher({
        maxItems: opts.batch.maxMessages ?? 64,
        maxWaitMs: opts.batch.maxWaitMs ?? 5,
        maxConcurrent: opts.batch.maxConcurrent,
        flush: (items) => commits.commitBatch(items),
        onError: (err) => log.error({ err }, 'batch flush failed unexpectedly'),
      })
    : undefined;

  async function deliver(ch: Channel, msg: ConsumeMessage): Promise<void> {
    inFlight++;
    const started = performance.now();
    let outcome: Outcome = 'requeued';
    try {
      outcome = await handleDelivery(ch, msg);
    } catch (err) {
      log.error({ err }, 'consumer failed to settle a message; requeueing');
      settle(ch, msg, 'requeue');
    } finally {
      metrics?.handleDuration.observe({ consumer: consumerId, outcome }, (performance.now() - started) / 1000);
      inFlight--;
      if (inFlight === 0) onIdle?.();
    }
  }

  async function handleDelivery(ch: Channel, msg: ConsumeMessage): Promise<Outcome> {
    const attempt = retryCount(msg) + 1;
    const decoded = decode(msg, broker.exchanges, opts.bindings);
    if (!decoded.ok) {
      log.warn({ message_id: msg.properties.messageId as unknown, error: decoded.error }, 'invalid message');
      return failures.deadLetter(ch, msg, attempt, 'invalid', decoded.error);
    }
    const message = decoded.message;
    let share: Share<Prepared>;
    try {
      share = await shares.take(message, { redelivered: msg.fields.redelivered || attempt > 1 });
    } catch (err) {
      return failures.fail(ch, msg, message, attempt, err);
    }
    if (!batcher) return commits.commitOne(ch, msg, message, share, attempt);
    const prepared = share.prepared as Prepared;
    return new Promise<Outcome>((settled) => batcher.add({ ch, msg, message, prepared, attempt, settled, share }));
  }

  return {
    queues,
    async start() {
      stopping = false;
      channel.resume();
      cleanups.push(await broker.addSetup(channel.setup));
      if (metrics) {
        for (const [queue, kind] of [
          [queues.work, 'work'],
          ...queues.tiers.map((t) => [t.queue, 'retry'] as const),
          [queues.dead, 'dead'],
        ] as const) {
          cleanups.push(metrics.watchQueue({ queue, kind, depth: () => queueDepth(broker, queue) }));
        }
      }
    },
    async stop() {
      stopping = true;
      for (const cleanup of cleanups.splice(0)) cleanup();
      const close = await channel.cancel();
      // Messages waiting for their batch go now rather than after maxWaitMs.
      void batcher?.drain();
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, stopTimeoutMs);
          onIdle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        onIdle = undefined;
        if (inFlight > 0)
          log.warn({ in_flight: inFlight }, 'stop deadline passed; unacked messages will be redelivered');
      }
      // Closing the channel returns anything still unacked to the queue; the acks of this turn go first.
      await close();
    },
  };
}
