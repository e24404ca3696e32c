import type { Channel } from 'amqplib';

/** The two exchanges every message goes through; outbox rows store this logical name, not the prefixed one. */
export type ExchangeKind = 'events' | 'commands';

export type ExchangeNames = {
  /** Durable topic exchange; routing key = event type (`email.delivered`, `internal.domain.state`). */
  events: string;
  /** Durable direct exchange; routing key = command name (`scheduler.set-timer`). */
  commands: string;
  /** Fanout exchange and quorum queue that keep commands no queue is bound for (alternate exchange). */
  unroutable: string;
};

export type ConsumerQueueNames = {
  /** `${prefix}.${service}.${consumer}`: the quorum work queue. */
  work: string;
  /** `${work}.dead`: dead letters, kept until re-driven. */
  dead: string;
  /** One retry queue per delay tier, `${work}.retry.10s`: TTL, then dead-lettered back to `work`. */
  tiers: ReadonlyArray<{ delayMs: number; queue: string }>;
};

const NAME_PART = /^[a-z0-9][a-z0-9_-]*$/;
// BROKER_PREFIX may be dotted (`prod.postline`); service and consumer names are single words.
const PREFIX = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export function exchangeNames(prefix: string): ExchangeNames {
  checkPrefix(prefix);
  return { events: `${prefix}.events`, commands: `${prefix}.commands`, unroutable: `${prefix}.unroutable` };
}

export function consumerQueueNames(
  prefix: string,
  service: string,
  consumer: string,
  tiersMs: readonly number[],
): ConsumerQueueNames {
  checkPrefix(prefix);
  checkPart('service', service);
  checkPart('consumer name', consumer);
  const work = `${prefix}.${service}.${consumer}`;
  return {
    work,
    dead: deadQueueName(work),
    tiers: tiersMs.map((delayMs) => ({ delayMs, queue: `${work}.retry.${tierLabel(delayMs)}` })),
  };
}

export function deadQueueName(workQueue: string): string {
  return `${workQueue}.dead`;
}

/** `1s`, `60s`, `250ms`: whole seconds when exact, else milliseconds. */
function tierLabel(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

function checkPrefix(prefix: string): void {
  if (!PREFIX.test(prefix)) throw new Error(`invalid broker prefix "${prefix}"`);
}

function checkPart(what: string, value: string): void {
  if (!NAME_PART.test(value)) throw new Error(`invalid broker ${what} "${value}" (lowercase, digits, - and _)`);
}

// Quorum queues keep dead letters until the target confirms only with this strategy, which in turn needs
// reject-publish overflow (RabbitMQ's dead-lettering guide); without it a dead-lettered message can be lost.
const SAFE_DEAD_LETTERING = { 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' };

/**
 * Past this many deliveries of one message (crash loops: the process dies before acking), the broker
 * dead-letters it itself. The consumer's own retries ack and re-publish, so they do not count.
 */
export const DELIVERY_LIMIT = 20;

/** Idempotent: declares the exchanges and the queue that parks unroutable commands. */
export async function declareExchanges(ch: Channel, names: ExchangeNames): Promise<void> {
  await ch.assertExchange(names.unroutable, 'fanout', { durable: true });
  await ch.assertQueue(names.unroutable, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await ch.bindQueue(names.unroutable, names.unroutable, '');
  await ch.assertExchange(names.events, 'topic', { durable: true });
  // A command nobody listens for yet (consumer not deployed) is parked, not dropped or bounced back.
  await ch.assertExchange(names.commands, 'direct', { durable: true, alternateExchange: names.unroutable });
}

export type Binding<K extends string = string> = { exchange: ExchangeKind; routingKey: K };

/**
 * Idempotent: the work queue with its bindings, one retry queue per tier and the dead-letter queue.
 * Queue arguments are immutable: changing the tiers adds new retry queues, it never alters old ones.
 */
export async function declareConsumerQueues(
  ch: Channel,
  exchanges: ExchangeNames,
  queues: ConsumerQueueNames,
  bindings: readonly Binding[],
): Promise<void> {
  await ch.assertQueue(queues.dead, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await ch.assertQueue(queues.work, {
    durable: true,
    arguments: {
      'x-queue-type': 'quorum',
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': queues.dead,
      'x-delivery-limit': DELIVERY_LIMIT,
      ...SAFE_DEAD_LETTERING,
    },
  });
  for (const tier of queues.tiers) {
    await ch.assertQueue(tier.queue, {
      durable: true,
      arguments: {
        'x-queue-type': 'quorum',
        'x-message-ttl': tier.delayMs,
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': queues.work,
        ...SAFE_DEAD_LETTERING,
      },
    });
  }
  for (const binding of bindings) {
    await ch.bindQueue(queues.work, exchanges[binding.exchange], binding.routingKey);
  }
}

/**
 * RabbitMQ topic matching: words split on `.`, `*` is exactly one word, `#` zero or more. A direct
 * exchange binding has neither, so this is exact equality there.
 *
 * @example
 * topicMatches('email.*', 'email.delivered') // true
 * topicMatches('email.*', 'internal.domain.state') // false
 */
export function topicMatches(pattern: string, key: string): boolean {
  const p = pattern.split('.');
  const k = key.split('.');
  const match = (i: number, j: number): boolean => {
    if (i === p.length) return j === k.length;
    if (p[i] === '#') return match(i + 1, j) || (j < k.length && match(i, j + 1));
    if (j === k.length) return false;
    return (p[i] === '*' || p[i] === k[j]) && match(i + 1, j + 1);
  };
  return match(0, 0);
}
