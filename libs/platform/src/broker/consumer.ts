import type { Channel, ConsumeMessage } from 'amqplib';
import { sql, type Kysely, type Transaction } from 'kysely';
import { parseMessage, type Message, type RoutingKey } from '@postline/contracts';
import { isDatabaseUnavailable, PREPARED } from '../db/db.ts';
import type { Logger } from '../logger/logger.ts';
import { createAcker, type Acker } from './acks.ts';
import { createBatcher, type Batcher } from './batcher.ts';
import type { Broker, Setup } from './broker.ts';
import { DEAD_HEADERS, queueDepth, REDRIVEN_AT_HEADER } from './dead-letters.ts';
import {
  checkRetryPolicy,
  decideFailure,
  DEFAULT_RETRY_POLICY,
  RETRY_COUNT_HEADER,
  type DeadReason,
  type RetryPolicy,
} from './retry-policy.ts';
import {
  consumerQueueNames,
  declareConsumerQueues,
  topicMatches,
  type Binding,
  type ConsumerQueueNames,
} from './topology.ts';

/** Routing keys a binding can deliver: an exact key as is, `email.*` / `email.#` by prefix, else every key. */
export type MatchingKeys<P extends string> = P extends RoutingKey
  ? P
  : P extends `${infer Head}.*` | `${infer Head}.#`
    ? Extract<RoutingKey, `${Head}.${string}`>
    : RoutingKey;

export type ConsumerOptions<DB, P extends string, Prepared = undefined> = {
  broker: Broker;
  /** The service's own database; its schema holds the `inbox` table (createMessagingTables). */
  db: Kysely<DB>;
  service: string;
  /** Unique within the service; names the queue `${prefix}.${service}.${name}` and the inbox rows. */
  name: string;
  bindings: ReadonlyArray<Binding<P>>;
  /** Unacked deliveries in flight, which is also how many handlers run at once. Default 16. */
  prefetch?: number;
  retry?: Partial<RetryPolicy>;
  /** How long `stop` waits for running handlers before closing the channel. Default 10 s. */
  stopTimeoutMs?: number;
  logger?: Logger;
  /**
   * Slow I/O the handler needs (DNS lookups, HTTP calls), run before the transaction opens so that no
   * transaction is held across it; its result is the handler's third argument. It may run again for a
   * redelivered message (whenever the transaction did not commit), so an effect it has must be one that may
   * happen twice (the sender's SMTP transaction: a duplicate is the accepted risk of an MTA), and the
   * handler must record it idempotently. Its errors are handled as the handler's.
   */
  prepare?: (message: Message<MatchingKeys<P>>, delivery: Delivery) => Promise<Prepared>;
  /**
   * For a `prepare` whose effect should not be repeated needlessly (an SMTP transaction that got its 250):
   * when the transaction recording prepared results fails because the database is unavailable
   * (isDatabaseUnavailable), it is tried again with the same results after each of these delays, the
   * messages still unacked (a batch as a whole), before they go to a retry tier and are prepared again. A
   * database outage then delays the record instead of repeating the effect; any other failure is handled at
   * once, as without this option. Default: none.
   */
  recordRetriesMs?: readonly number[];
  /**
   * Called with a prepared result that no handler will see: its message was a duplicate, or its
   * transaction failed (the message is retried, and prepared again). For releasing what `prepare` holds.
   */
  discard?: (prepared: Prepared) => void;
  /**
   * Runs inside a transaction that has already recorded the message id in `inbox`; the message is acked
   * only after that transaction commits. Throw PermanentError, RetryLaterError or anything else. It may
   * return a function, run once the transaction has committed (work that must not run for a rollback;
   * nothing guarantees it runs at all, so what it starts needs its own recovery).
   */
  handle: (message: Message<MatchingKeys<P>>, trx: Transaction<DB>, prepared: Prepared) => Promise<void | (() => void)>;
  /**
   * Handle several messages in ONE transaction: the inbox rows of a batch are written with one statement,
   * then `batch.handle` (or `handle` for each message in turn) runs, and every message of the batch is
   * acked once that transaction commits. When the batch transaction fails, each message of it is handled
   * again on its own (`handle`, its own transaction), so a poison message is retried or dead-lettered
   * alone while the others commit. Absent: one transaction per message.
   */
  batch?: BatchOptions<DB, P, Prepared>;
  /**
   * false: no inbox row is written and every delivery reaches the handler, for a handler whose own writes
   * make a redelivery a no-op (a unique key with on conflict do nothing). Saves a write per message.
   * Default true.
   */
  inbox?: boolean;
};

/** What a handler may know of the delivery itself. */
export type Delivery = {
  /**
   * The message reached this consumer before: RabbitMQ redelivered it (requeued, or unacked when a channel
   * closed) or it comes back from a retry tier. Its earlier handling may have had effects, or even committed.
   */
  redelivered: boolean;
};

export type BatchItem<P extends string, Prepared = undefined> = {
  message: Message<MatchingKeys<P>>;
  prepared: Prepared;
};

export type BatchOptions<DB, P extends string, Prepared = undefined> = {
  /** Most messages in one transaction. Default 64; the prefetch should be larger. */
  maxMessages?: number;
  /** How long a message waits for others to join its batch. Default 5 ms. */
  maxWaitMs?: number;
  /**
   * Most batch transactions at once; while that many run, arriving messages wait and go together as soon
   * as one commits, so batches grow with the load. Default: no limit (each `maxWaitMs` window is a batch).
   */
  maxConcurrent?: number;
  /**
   * Handles the batch's messages that are not duplicates (each id once, in delivery order). It must have the
   * same effect as `handle` called for each of them in turn, which is what runs when it is absent and for
   * every message on its own when the batch fails. It may return after-commit work, as `handle` may.
   */
  handle?: (items: BatchItem<P, Prepared>[], trx: Transaction<DB>) => Promise<void | (() => void)>;
};

export type Consumer = {
  readonly queues: ConsumerQueueNames;
  /** Declares the queues and consumes; when the broker is down, consuming begins once it connects. */
  start(): Promise<void>;
  /** Cancels consumption, waits for handlers in flight (bounded), closes the channel. */
  stop(): Promise<void>;
};

type Outcome = 'ok' | 'duplicate' | 'retried' | 'dead_lettered' | 'requeued';
type Decoded = { ok: true; message: Message } | { ok: false; error: string };
/** A decoded and prepared delivery, waiting for its transaction. */
type Ready<Prepared> = {
  ch: Channel;
  msg: ConsumeMessage;
  message: Message;
  prepared: Prepared;
  attempt: number;
  settled: (outcome: Outcome) => void;
  /** The prepare this copy holds, shared with the other copies of its message in flight here. */
  share: Share<Prepared>;
};

/**
 * One prepare and the copies of its message holding it. Its result is discarded once the last copy has
 * settled, unless one of them was handled: a result a committed handler recorded is never discarded.
 */
type Share<Prepared> = {
  result: Promise<Prepared>;
  prepared?: Prepared;
  copies: number;
  handled: boolean;
  key?: string;
};

/**
 * A typed, idempotent consumer on its own quorum queue with delay-tier retries and a dead-letter queue.
 * Envelopes and data are validated against the contracts catalog before the handler sees them; an invalid
 * message is dead-lettered at once.
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

  let channel: Channel | undefined;
  let consumerTag: string | undefined;
  let stopping = false;
  let inFlight = 0;
  let onIdle: (() => void) | undefined;
  const cleanups: Array<() => void> = [];
  const ackers = new WeakMap<Channel, Acker>();

  const setup: Setup = async (connection) => {
    let connectionClosed = false;
    connection.once('close', () => (connectionClosed = true));
    const ch = await connection.createChannel();
    ch.on('error', (err: unknown) => log.warn({ err }, 'consumer channel error'));
    ch.on('close', () => {
      if (channel !== ch) return;
      channel = undefined;
      consumerTag = undefined;
      // The server closed only this channel: open it again on the same connection after a pause. When the
      // whole connection went, the broker's reconnect runs this setup again instead.
      if (stopping) return;
      setTimeout(() => {
        if (stopping || channel || connectionClosed) return;
        setup(connection).catch((err: unknown) => log.warn({ err }, 'consumer re-setup failed'));
      }, 1_000).unref();
    });
    await declareConsumerQueues(ch, broker.exchanges, queues, opts.bindings);
    await ch.prefetch(opts.prefetch ?? 16);
    const acker = createAcker(ch);
    ackers.set(ch, acker);
    const reply = await ch.consume(
      queues.work,
      (msg) => {
        if (msg) {
          acker.received(msg);
          void deliver(ch, msg);
        }
        // null: the server cancelled us (queue deleted); closing leads to a fresh declare and consume.
        else ch.close().catch(() => undefined);
      },
      { noAck: false },
    );
    channel = ch;
    consumerTag = reply.consumerTag;
  };

  /**
   * The prepares of this process not settled yet, by message id (lower-case). A second copy of a message
   * whose first copy is still being prepared or recorded here (the broker redelivered it after a lost
   * channel, or an outbox published it again after a lost commit) waits for that prepare and shares its
   * result instead of repeating its effect (an SMTP transaction, a webhook POST): the inbox then records
   * one of the two and acks both. Held from the prepare's start until the last copy holding it settles, or
   * at once if the prepare fails (a later copy prepares afresh). Only with an inbox: a consumer without one
   * would record both copies, so its own records must tell them apart instead.
   */
  const preparing = new Map<string, Share<Prepared>>();

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

  const batcher: Batcher<Ready<Prepared>> | undefined = opts.batch
    ? createBatcher({
        maxItems: opts.batch.maxMessages ?? 64,
        maxWaitMs: opts.batch.maxWaitMs ?? 5,
        maxConcurrent: opts.batch.maxConcurrent,
        flush: (items) => commitBatch(items),
        onError: (err) => log.error({ err }, 'batch flush failed unexpectedly'),
      })
    : undefined;

  async function handleDelivery(ch: Channel, msg: ConsumeMessage): Promise<Outcome> {
    const attempt = retryCount(msg) + 1;
    const decoded = decode(msg);
    if (!decoded.ok) {
      log.warn({ message_id: msg.properties.messageId as unknown, error: decoded.error }, 'invalid message');
      return deadLetter(ch, msg, attempt, 'invalid', decoded.error);
    }
    const message = decoded.message;
    let share: Share<Prepared>;
    let prepared: Prepared;
    try {
      const key = message.id.toLowerCase();
      const running = useInbox ? preparing.get(key) : undefined;
      if (running) {
        running.copies++;
        share = running;
        metrics?.sharedPrepares.inc({ consumer: consumerId });
        log.info(
          { message_id: message.id, type: message.type },
          'a copy of a message in flight here; sharing its prepare',
        );
      } else {
        const result = (
          opts.prepare
            ? opts.prepare(message as Message<MatchingKeys<P>>, { redelivered: msg.fields.redelivered || attempt > 1 })
            : Promise.resolve(undefined)
        ) as Promise<Prepared>;
        const created: Share<Prepared> = { result, copies: 1, handled: false };
        share = created;
        if (useInbox && opts.prepare) {
          created.key = key;
          preparing.set(key, created);
          result.catch(() => forget(created));
        }
      }
      prepared = await share.result;
      share.prepared = prepared;
    } catch (err) {
      return fail(ch, msg, message, attempt, err);
    }
    if (!batcher) return commitOne(ch, msg, message, share, attempt);
    return new Promise<Outcome>((settled) => batcher.add({ ch, msg, message, prepared, attempt, settled, share }));
  }

  /**
   * The ids (lower-case) not handled before, recording them in `inbox` in the caller's transaction; every
   * id when the consumer keeps no inbox.
   */
  async function claimNew(trx: Transaction<DB>, messageIds: readonly string[]): Promise<Set<string>> {
    const ids = [...new Set(messageIds.map((id) => id.toLowerCase()))];
    if (!useInbox) return new Set(ids);
    const { rows } = await sql<{ message_id: string }>`insert ${PREPARED} into inbox (consumer, message_id)
      select ${consumerId}, unnest(${ids}::uuid[]) on conflict do nothing returning message_id`.execute(trx);
    return new Set(rows.map((r) => r.message_id.toLowerCase()));
  }

  /**
   * One message in its own transaction: inbox row, handler, commit, ack, after-commit work. A failed
   * transaction is tried again after each of `recordRetriesMs` (unless the consumer is stopping).
   */
  async function commitOne(
    ch: Channel,
    msg: ConsumeMessage,
    message: Message,
    share: Share<Prepared>,
    attempt: number,
    retry = 0,
  ): Promise<Outcome> {
    const prepared = share.prepared as Prepared;
    try {
      const after: { run?: void | (() => void) } = {};
      const fresh = await opts.db.transaction().execute(async (trx) => {
        // Already processed and committed: a redelivery or a duplicate publish. Do nothing, just ack.
        if ((await claimNew(trx, [message.id])).size === 0) return false;
        after.run = await opts.handle(message as Message<MatchingKeys<P>>, trx, prepared);
        return true;
      });
      settle(ch, msg, 'ack');
      settleCopy(share, fresh);
      runAfter(after.run, message.id);
      return fresh ? 'ok' : 'duplicate';
    } catch (err) {
      if (await recordAgain(err, retry, 1)) return commitOne(ch, msg, message, share, attempt, retry + 1);
      settleCopy(share, false);
      return fail(ch, msg, message, attempt, err);
    }
  }

  /**
   * Whether a failed record of prepared results is to be tried again (`recordRetriesMs`, the database
   * unavailable, the consumer not stopping), after waiting the retry's delay.
   */
  async function recordAgain(err: unknown, retry: number, messages: number): Promise<boolean> {
    const delayMs = opts.recordRetriesMs?.[retry];
    if (delayMs === undefined || stopping || !isDatabaseUnavailable(err)) return false;
    log.warn({ err, messages, retry: retry + 1 }, 'recording prepared results failed; trying again');
    metrics?.recordRetries.inc({ consumer: consumerId }, messages);
    // In steps, so that a consumer told to stop does not wait out a long delay first.
    for (let waited = 0; waited < delayMs && !stopping; waited += 250)
      await new Promise((resolve) => setTimeout(resolve, Math.min(250, delayMs - waited)));
    return !stopping;
  }

  /**
   * A batch in one transaction: one multi-row inbox insert tells the new messages from redeliveries, the
   * handler sees only the new ones, and every message is acked after the commit. If the transaction
   * fails, each message is handled again on its own, so the failure lands only on the message causing it.
   */
  async function commitBatch(items: Ready<Prepared>[], retry = 0): Promise<void> {
    const fresh = new Set<Ready<Prepared>>();
    const after: { run?: void | (() => void) } = {};
    try {
      await opts.db.transaction().execute(async (trx) => {
        const newIds = await claimNew(
          trx,
          items.map((i) => i.message.id),
        );
        for (const item of items) {
          const id = item.message.id.toLowerCase();
          // The first copy of a new id is handled; later copies in the same batch are duplicates.
          if (newIds.delete(id)) fresh.add(item);
        }
        const handled = [...fresh].map((i) => ({
          message: i.message as Message<MatchingKeys<P>>,
          prepared: i.prepared,
        }));
        if (handled.length === 0) return;
        if (opts.batch?.handle) {
          after.run = await opts.batch.handle(handled, trx);
        } else {
          const runs: Array<() => void> = [];
          for (const h of handled) {
            const run = await opts.handle(h.message, trx, h.prepared);
            if (run) runs.push(run);
          }
          if (runs.length > 0) after.run = () => runs.forEach((run) => runAfter(run));
        }
      });
    } catch (err) {
      // The database is down: the batch is recorded again as a whole, so that its messages do not each
      // wait out retries of their own.
      if (await recordAgain(err, retry, items.length)) return commitBatch(items, retry + 1);
      if (items.length === 1) {
        const [item] = items as [Ready<Prepared>];
        settleCopy(item.share, false);
        item.settled(await fail(item.ch, item.msg, item.message, item.attempt, err));
        return;
      }
      log.info({ err, messages: items.length }, 'batch transaction failed; handling its messages one by one');
      metrics?.batchFallbacks.inc({ consumer: consumerId });
      // A batch that used up its record retries with the database down gives its messages none of their own;
      // otherwise each gets its own, all at once, so that no message waits out the others' retries unacked.
      const spent = isDatabaseUnavailable(err) ? retry : 0;
      await Promise.all(
        items.map(async (item) =>
          item.settled(await commitOne(item.ch, item.msg, item.message, item.share, item.attempt, spent)),
        ),
      );
      return;
    }
    metrics?.batchSize.observe({ consumer: consumerId }, items.length);
    for (const item of items) {
      settle(item.ch, item.msg, 'ack');
      settleCopy(item.share, fresh.has(item));
      item.settled(fresh.has(item) ? 'ok' : 'duplicate');
    }
    runAfter(after.run);
  }

  /** Stops offering a prepare to later copies (it settled, or failed). */
  function forget(share: Share<Prepared>): void {
    if (share.key !== undefined && preparing.get(share.key) === share) preparing.delete(share.key);
  }

  /**
   * One copy of a message is done with its prepared result (`handled`: a handler's transaction recording it
   * committed). The result is discarded once every copy holding it is done and none was handled.
   */
  function settleCopy(share: Share<Prepared>, handled: boolean): void {
    share.copies--;
    if (handled) share.handled = true;
    if (share.copies > 0) return;
    forget(share);
    if (share.handled) return;
    try {
      opts.discard?.(share.prepared as Prepared);
    } catch (err) {
      log.error({ err }, 'discarding a prepared result failed');
    }
  }

  function runAfter(run: void | (() => void), messageId?: string): void {
    if (!run) return;
    try {
      run();
    } catch (err) {
      log.error({ err, message_id: messageId }, 'after-commit work failed');
    }
  }

  /** Retry tier or dead letter for a failed prepare or handler, by the retry policy. */
  async function fail(
    ch: Channel,
    msg: ConsumeMessage,
    message: Message,
    attempt: number,
    err: unknown,
  ): Promise<Outcome> {
    const decision = decideFailure(err, attempt, policy);
    const context = { err, message_id: message.id, type: message.type, attempt };
    if (decision.action === 'dead') {
      log.warn({ ...context, reason: decision.reason }, 'handler failed; dead-lettering');
      return deadLetter(ch, msg, attempt, decision.reason, errorText(err));
    }
    log.info({ ...context, retry_in_ms: decision.tierMs }, 'handler failed; retrying later');
    const tier = queues.tiers.find((t) => t.delayMs === decision.tierMs);
    const moved = await moveTo(ch, msg, tier?.queue ?? queues.work, { [RETRY_COUNT_HEADER]: attempt });
    if (moved) metrics?.retried.inc({ consumer: consumerId });
    return moved ? 'retried' : 'requeued';
  }

  async function deadLetter(
    ch: Channel,
    msg: ConsumeMessage,
    attempt: number,
    reason: DeadReason,
    error: string,
  ): Promise<Outcome> {
    const headers: Record<string, unknown> = msg.properties.headers ?? {};
    const now = new Date().toISOString();
    const earlierDeaths = Number(headers[DEAD_HEADERS.count]);
    const moved = await moveTo(ch, msg, queues.dead, {
      [RETRY_COUNT_HEADER]: attempt - 1,
      [DEAD_HEADERS.reason]: reason,
      [DEAD_HEADERS.error]: error.slice(0, 500),
      [DEAD_HEADERS.at]: now,
      // A redriven message that dies again keeps its first death and counts this one.
      [DEAD_HEADERS.firstAt]: typeof headers[DEAD_HEADERS.firstAt] === 'string' ? headers[DEAD_HEADERS.firstAt] : now,
      [DEAD_HEADERS.count]: (Number.isInteger(earlierDeaths) && earlierDeaths > 0 ? earlierDeaths : 0) + 1,
      ...(typeof headers[REDRIVEN_AT_HEADER] === 'string' ? { [REDRIVEN_AT_HEADER]: headers[REDRIVEN_AT_HEADER] } : {}),
    });
    if (moved) metrics?.deadLettered.inc({ consumer: consumerId, reason });
    return moved ? 'dead_lettered' : 'requeued';
  }

  /**
   * Publishes a copy to `queue` with confirms, then acks the original: a crash in between duplicates the
   * message (the inbox absorbs it), never loses it. When the copy is not confirmed, the original goes back.
   */
  async function moveTo(ch: Channel, msg: ConsumeMessage, queue: string, extra: Record<string, unknown>) {
    const headers: Record<string, unknown> = msg.properties.headers ?? {};
    const result = await broker.publish('', queue, msg.content, {
      messageId: String(msg.properties.messageId ?? ''),
      type: msg.properties.type as string | undefined,
      headers: {
        'x-original-exchange': headers['x-original-exchange'] ?? msg.fields.exchange,
        'x-original-routing-key': headers['x-original-routing-key'] ?? msg.fields.routingKey,
        ...extra,
      },
    });
    if (result.ok) {
      settle(ch, msg, 'ack');
      return true;
    }
    log.warn({ queue, reason: result.reason }, 'could not move message; requeueing');
    // A broker that refuses the copy would otherwise hand the message straight back in a tight loop.
    await new Promise((resolve) => setTimeout(resolve, 500));
    settle(ch, msg, 'requeue');
    return false;
  }

  /** Acks on the delivering channel; if that channel is gone the broker redelivers, which is safe. */
  function settle(ch: Channel, msg: ConsumeMessage, how: 'ack' | 'requeue'): void {
    const acker = ackers.get(ch);
    if (!acker) return;
    try {
      if (how === 'ack') acker.ack(msg);
      else acker.requeue(msg);
    } catch (err) {
      log.debug({ err }, 'channel closed before settling; the message will be redelivered');
    }
  }

  function decode(msg: ConsumeMessage): Decoded {
    let envelope: unknown;
    try {
      envelope = JSON.parse(msg.content.toString('utf8'));
    } catch {
      return { ok: false, error: 'body is not JSON' };
    }
    const type = (envelope as { type?: unknown } | null)?.type;
    if (typeof type !== 'string') return { ok: false, error: 'envelope has no type' };
    const { exchange, routingKey } = msg.fields;
    const fromExchange = exchange === broker.exchanges.events || exchange === broker.exchanges.commands;
    if (fromExchange && routingKey !== type) {
      return { ok: false, error: `routing key "${routingKey}" differs from envelope type "${type}"` };
    }
    if (!opts.bindings.some((b) => topicMatches(b.routingKey, type))) {
      return { ok: false, error: `type "${type}" matches none of this consumer's bindings` };
    }
    return parseMessage(type, envelope);
  }

  return {
    queues,
    async start() {
      stopping = false;
      cleanups.push(await broker.addSetup(setup));
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
      const ch = channel;
      const tag = consumerTag;
      channel = undefined;
      if (ch && tag) await ch.cancel(tag).catch(() => undefined);
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
      if (ch) ackers.get(ch)?.flush();
      if (ch) await ch.close().catch(() => undefined);
    },
  };
}

function retryCount(msg: ConsumeMessage): number {
  const value = Number(msg.properties.headers?.[RETRY_COUNT_HEADER] ?? 0);
  return Number.isInteger(value) && value >= 0 ? value : 0;
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
