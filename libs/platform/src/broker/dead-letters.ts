import type { GetMessage, MessageProperties } from 'amqplib';
import type { Broker } from './broker.ts';
import { RETRY_COUNT_HEADER } from './retry-policy.ts';
import { deadQueueName } from './topology.ts';

/**
 * What the consumer records on a message it dead-letters (consumer.ts), read back by `describeDeadLetter`.
 * `reason`, `error` and `at` describe the last death and are dropped by a redrive; `first-at` and `count`
 * stay with the message for good, so that a message that dies again shows its whole history.
 */
export const DEAD_HEADERS = {
  reason: 'x-dead-reason',
  error: 'x-dead-error',
  at: 'x-dead-at',
  firstAt: 'x-first-dead-at',
  count: 'x-dead-count',
} as const;

/** Set by a redrive on the copy it puts back; kept if the message dies again. */
export const REDRIVEN_AT_HEADER = 'x-redriven-at';

/** A dead letter as an operator reads it (`npm run admin -- dead-letters show`). */
export type DeadLetter = {
  message_id: string | null;
  /** The envelope's type (its routing key), when the body is an envelope. */
  type: string | null;
  team_id: string | null;
  /**
   * Why it died: the consumer's `invalid` (failed validation), `permanent` (PermanentError) or `exhausted`
   * (retries used up), or the broker's own x-death reason (`delivery_limit`: redelivered past
   * DELIVERY_LIMIT, a process crashing on it each time).
   */
  reason: string;
  /** The error the handler threw, or the validation failure (at most 500 characters). */
  error: string | null;
  /** Times it was dead-lettered: more than one when it failed again after a redrive. */
  deaths: number;
  first_dead_at: string | null;
  last_dead_at: string | null;
  /** Where it was first published: exchange and routing key. */
  original_exchange: string | null;
  original_routing_key: string | null;
  /** When it was last redriven, if ever. */
  redriven_at: string | null;
};

type XDeath = { reason?: unknown; queue?: unknown; count?: unknown; time?: unknown };

/**
 * Reads a dead-lettered message: the envelope's id, type and team, and why and when it died, from the
 * consumer's headers (DEAD_HEADERS) or, for a message the broker itself dead-lettered, from `x-death`.
 */
export function describeDeadLetter(msg: {
  content: Buffer;
  properties: Pick<MessageProperties, 'messageId' | 'type' | 'headers'>;
}): DeadLetter {
  const headers: Record<string, unknown> = msg.properties.headers ?? {};
  let envelope: { id?: unknown; type?: unknown; team_id?: unknown } = {};
  try {
    const parsed: unknown = JSON.parse(msg.content.toString('utf8'));
    if (parsed && typeof parsed === 'object') envelope = parsed;
  } catch {
    // Not JSON: an invalid message, described by its properties alone.
  }
  // Deaths the broker recorded; an `expired` entry is a stay in a retry tier, not a death.
  const brokerDeaths = (Array.isArray(headers['x-death']) ? (headers['x-death'] as XDeath[]) : []).filter(
    (d) => d.reason !== 'expired',
  );
  const brokerLast = brokerDeaths
    .map((d) => timestampOf(d.time))
    .filter((t): t is string => t !== null)
    .sort()
    .pop();
  const ownReason = text(headers[DEAD_HEADERS.reason]);
  const lastDeadAt = ownReason ? text(headers[DEAD_HEADERS.at]) : (brokerLast ?? null);
  // The count the message carries covers the deaths the consumer recorded and those before a redrive; a
  // death the broker recorded since is in x-death alone.
  const counted = Number(headers[DEAD_HEADERS.count]);
  const before = Number.isInteger(counted) && counted > 0 ? counted : 0;
  const deaths = ownReason
    ? Math.max(1, before)
    : before +
      Math.max(
        1,
        brokerDeaths.reduce((n, d) => n + (Number(d.count) || 1), 0),
      );
  return {
    message_id: text(envelope.id) ?? text(msg.properties.messageId),
    type: text(envelope.type) ?? text(msg.properties.type),
    team_id: text(envelope.team_id),
    reason: ownReason ?? text(brokerDeaths[0]?.reason) ?? text(headers['x-first-death-reason']) ?? 'unknown',
    error: text(headers[DEAD_HEADERS.error]),
    deaths,
    first_dead_at: text(headers[DEAD_HEADERS.firstAt]) ?? lastDeadAt,
    last_dead_at: lastDeadAt,
    original_exchange: text(headers['x-original-exchange']),
    original_routing_key: text(headers['x-original-routing-key']),
    redriven_at: text(headers[REDRIVEN_AT_HEADER]),
  };
}

function text(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return null;
}

/** amqplib decodes an AMQP timestamp (seconds) as `{ '!': 'timestamp', value }`. */
function timestampOf(value: unknown): string | null {
  const seconds = typeof value === 'number' ? value : (value as { value?: unknown } | null)?.value;
  if (value instanceof Date) return value.toISOString();
  return typeof seconds === 'number' ? new Date(seconds * 1000).toISOString() : null;
}

/** The consumer's headers that say what `letter` says, so that it reads the same wherever it is moved. */
function historyHeaders(letter: DeadLetter): Record<string, unknown> {
  return {
    [DEAD_HEADERS.reason]: letter.reason,
    ...(letter.error === null ? {} : { [DEAD_HEADERS.error]: letter.error }),
    ...(letter.last_dead_at === null ? {} : { [DEAD_HEADERS.at]: letter.last_dead_at }),
    ...(letter.first_dead_at === null ? {} : { [DEAD_HEADERS.firstAt]: letter.first_dead_at }),
    [DEAD_HEADERS.count]: letter.deaths,
  };
}

/** Headers the broker owns or that describe one stay in a queue; a moved copy starts without them. */
function isBrokerHeader(key: string): boolean {
  return (
    key === 'x-death' || key.startsWith('x-first-death') || key.startsWith('x-last-death') || key === 'x-delivery-count'
  );
}

/** Ready messages in `queue`; undefined when the broker is down or the queue does not exist. */
export async function queueDepth(broker: Broker, queue: string): Promise<number | undefined> {
  if (!broker.isConnected()) return undefined;
  try {
    return await broker.withChannel(async (ch) => (await ch.checkQueue(queue)).messageCount);
  } catch {
    return undefined;
  }
}

/**
 * Reads up to `max` messages of `${queue}.dead` without removing them: each is taken, described, copied to
 * the tail of the same queue (confirmed, with its history in the consumer's headers) and only then acked.
 * Returning it with a nack instead would spend the quorum queue's delivery limit (20 by default since
 * RabbitMQ 4.0, and a dead-letter queue has nowhere to send what passes it): enough reads would drop it.
 * Only the messages there when it starts are read, and each once; those read move behind the others.
 *
 * @example
 * const letters = await peekDeadLetters(broker, 'postline.sender.deliver', 20);
 */
export async function peekDeadLetters(broker: Broker, queue: string, max: number): Promise<DeadLetter[]> {
  const dead = deadQueueName(queue);
  return broker.withChannel(async (ch) => {
    const limit = Math.min(max, (await ch.checkQueue(dead)).messageCount);
    const letters: DeadLetter[] = [];
    while (letters.length < limit) {
      const msg = await ch.get(dead, { noAck: false });
      if (msg === false) break;
      const letter = describeDeadLetter(msg);
      await moveCopy(broker, ch, msg, dead, { ...withoutBrokerHeaders(msg), ...historyHeaders(letter) });
      letters.push(letter);
    }
    return letters;
  });
}

/**
 * Moves up to `max` messages from `${queue}.dead` back to the work queue `queue`, oldest first, each with a
 * fresh retry budget; only messages already dead when it starts. Each copy is confirmed before its dead
 * letter is acked, so a failure midway duplicates at most one message (consumers are idempotent) and loses
 * none. The first death and the number of deaths go with the message, so that if it dies again its dead
 * letter shows both. `onMoved` hears of each message moved. Returns how many moved.
 *
 * @example
 * await redriveDeadLetters(broker, consumer.queues.work, 100);
 */
export async function redriveDeadLetters(
  broker: Broker,
  queue: string,
  max: number,
  onMoved?: (letter: DeadLetter) => void,
): Promise<number> {
  const dead = deadQueueName(queue);
  return broker.withChannel(async (ch) => {
    // Only what is dead now: a message that fails again while we run lands behind this snapshot.
    const limit = Math.min(max, (await ch.checkQueue(dead)).messageCount);
    let moved = 0;
    while (moved < limit) {
      const msg = await ch.get(dead, { noAck: false });
      if (msg === false) break;
      const letter = describeDeadLetter(msg);
      const {
        [RETRY_COUNT_HEADER]: _retries,
        [DEAD_HEADERS.reason]: _reason,
        [DEAD_HEADERS.error]: _error,
        [DEAD_HEADERS.at]: _at,
        ...headers
      } = withoutBrokerHeaders(msg);
      await moveCopy(broker, ch, msg, queue, {
        ...headers,
        ...(letter.first_dead_at === null ? {} : { [DEAD_HEADERS.firstAt]: letter.first_dead_at }),
        [DEAD_HEADERS.count]: letter.deaths,
        [REDRIVEN_AT_HEADER]: new Date().toISOString(),
      });
      moved++;
      onMoved?.(letter);
    }
    broker.logger.info({ queue, moved }, 'redrove dead letters');
    return moved;
  });
}

function withoutBrokerHeaders(msg: GetMessage): Record<string, unknown> {
  return Object.fromEntries(Object.entries(msg.properties.headers ?? {}).filter(([key]) => !isBrokerHeader(key)));
}

/** Publishes a copy of `msg` to `queue` with confirms, then acks `msg`; when the copy fails, `msg` goes back. */
async function moveCopy(
  broker: Broker,
  ch: { ack(msg: GetMessage): void; nack(msg: GetMessage, allUpTo?: boolean, requeue?: boolean): void },
  msg: GetMessage,
  queue: string,
  headers: Record<string, unknown>,
): Promise<void> {
  const result = await broker.publish('', queue, msg.content, {
    messageId: String(msg.properties.messageId ?? ''),
    type: msg.properties.type as string | undefined,
    headers,
  });
  if (!result.ok) {
    ch.nack(msg, false, true);
    throw new Error(`moving a message to ${queue} failed: publish ${result.reason}`);
  }
  ch.ack(msg);
}
