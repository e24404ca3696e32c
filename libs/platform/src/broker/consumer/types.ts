import type { Kysely, Transaction } from 'kysely';
import type { Message, RoutingKey } from '@postline/contracts';
import type { Logger } from '../../logger/logger.ts';
import type { Broker } from '../broker.ts';
import type { RetryPolicy } from '../retry-policy.ts';
import type { Binding, ConsumerQueueNames } from '../topology.ts';

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

/** How a delivery ended, the label of broker_message_handle_duration_seconds. */
export type Outcome = 'ok' | 'duplicate' | 'retried' | 'dead_lettered' | 'requeued';
