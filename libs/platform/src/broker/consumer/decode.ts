import type { ConsumeMessage } from 'amqplib';
import { parseMessage, type Message } from '@postline/contracts';
import { RETRY_COUNT_HEADER } from '../retry-policy.ts';
import { topicMatches, type Binding, type ExchangeNames } from '../topology.ts';

export type Decoded = { ok: true; message: Message } | { ok: false; error: string };

/**
 * A delivery's body as a message of the contracts catalog, or why it is not one: not JSON, no type, a
 * routing key other than its type, a type none of the consumer's bindings asked for, or data its schema
 * refuses. Such a message is dead-lettered at once.
 */
export function decode(msg: ConsumeMessage, exchanges: ExchangeNames, bindings: readonly Binding[]): Decoded {
  let envelope: unknown;
  try {
    envelope = JSON.parse(msg.content.toString('utf8'));
  } catch {
    return { ok: false, error: 'body is not JSON' };
  }
  const type = (envelope as { type?: unknown } | null)?.type;
  if (typeof type !== 'string') return { ok: false, error: 'envelope has no type' };
  const { exchange, routingKey } = msg.fields;
  const fromExchange = exchange === exchanges.events || exchange === exchanges.commands;
  if (fromExchange && routingKey !== type) {
    return { ok: false, error: `routing key "${routingKey}" differs from envelope type "${type}"` };
  }
  if (!bindings.some((b) => topicMatches(b.routingKey, type))) {
    return { ok: false, error: `type "${type}" matches none of this consumer's bindings` };
  }
  return parseMessage(type, envelope);
}

/** The handlings before this delivery (the retry header the tiers carry); 0 for a first delivery. */
export function retryCount(msg: ConsumeMessage): number {
  const value = Number(msg.properties.headers?.[RETRY_COUNT_HEADER] ?? 0);
  return Number.isInteger(value) && value >= 0 ? value : 0;
}
