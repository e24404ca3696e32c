import {
  isPublicEvent,
  parseMessage,
  type MessageData,
  type MessageEnvelope,
  type PublicEventType,
  type RoutingKey,
} from '@postline/contracts';
import { newId } from '../ids/ids.ts';
import type { ExchangeKind } from '../broker/topology.ts';

// The messages an outbox holds, as values: pure, so domain code may build them (the pure entry exports
// them); enqueue.ts writes them.

/** Public events and `internal.*` events go to the topic exchange; everything else in the catalog is a command. */
export type EventKey = Extract<RoutingKey, PublicEventType | `internal.${string}`>;
export type CommandKey = Exclude<RoutingKey, EventKey>;

/** One message to write, its data typed by its routing key. */
export type OutboxMessage = {
  [K in RoutingKey]: {
    exchange: ExchangeKind;
    type: K;
    team_id: string | null;
    data: MessageData<K>;
    /** Keep an existing envelope's identity (a scheduler firing a stored message); new UUIDv7 when absent. */
    id?: string;
    occurred_at?: string;
  };
}[RoutingKey];

export type OutboxRow = { exchange: ExchangeKind; envelope: MessageEnvelope };

/**
 * The envelopes `enqueue` would write, validated against the catalog (a bug throws). For a caller that
 * writes them inside a statement of its own (a data-modifying CTE) with `outboxSource`.
 */
export function outboxRows(messages: readonly OutboxMessage[]): OutboxRow[] {
  return messages.map((m) => {
    const envelope = {
      id: m.id ?? newId(),
      type: m.type,
      version: 1,
      occurred_at: m.occurred_at ?? new Date().toISOString(),
      team_id: m.team_id,
      data: m.data,
    };
    const parsed = parseMessage(m.type, envelope);
    if (!parsed.ok) throw new Error(`refusing to enqueue ${m.type}: ${parsed.error}`);
    if (m.exchange !== exchangeFor(m.type)) throw new Error(`${m.type} belongs on the ${exchangeFor(m.type)} exchange`);
    return { exchange: m.exchange, envelope: parsed.message as MessageEnvelope };
  });
}

/**
 * The outbox message of a `scheduler.set-timer`: at `due` the scheduler sends the command `type` with `data`
 * (in an envelope made now). Setting a `key` again moves or replaces that timer.
 *
 * @example
 * await enqueue(trx, [timerMessage(teamId, `domain-check:${id}`, due, 'domain-verifier.check-domain', { domain_id: id })]);
 */
export function timerMessage<K extends CommandKey>(
  teamId: string | null,
  key: string,
  due: Date,
  type: K,
  data: MessageData<K>,
): OutboxMessage {
  return {
    exchange: 'commands',
    type: 'scheduler.set-timer',
    team_id: teamId,
    data: {
      key,
      due_at: due.toISOString(),
      routing_key: type,
      message: { id: newId(), type, version: 1, occurred_at: new Date().toISOString(), team_id: teamId, data },
    },
  };
}

export function exchangeFor(type: RoutingKey): ExchangeKind {
  return isPublicEvent(type) || type.startsWith('internal.') ? 'events' : 'commands';
}
