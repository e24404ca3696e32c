import { sql, type QueryExecutorProvider } from 'kysely';
import {
  isPublicEvent,
  parseMessage,
  type MessageData,
  type MessageEnvelope,
  type PublicEventType,
  type RoutingKey,
} from '@postline/contracts';
import { PREPARED } from '../db/db.ts';
import { newId } from '../ids/ids.ts';
import type { ExchangeKind } from '../broker/topology.ts';
import { NOTIFY_RELAY } from './tables.ts';

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

/**
 * Writes the envelopes to `outbox` inside the caller's transaction (`trx`: any kysely transaction) and notifies the relay, which Postgres
 * delivers only at commit (a rollback publishes nothing). Data is validated against the catalog first, so a
 * bug throws here and rolls the state change back with it. Rows with an id already present are skipped.
 *
 * @example
 * await db.transaction().execute(async (trx) => {
 *   await markDelivered(trx, teamId, emailId);
 *   await enqueue(trx, [{ exchange: 'events', type: 'email.delivered', team_id: teamId, data }]);
 * });
 */
export async function enqueue(
  trx: QueryExecutorProvider,
  messages: readonly OutboxMessage[],
): Promise<MessageEnvelope[]> {
  if (messages.length === 0) return [];
  const rows = outboxRows(messages);
  // One round trip, with a text that does not depend on the number of messages. current_schema() is the
  // service's schema (search_path), the same name the relay listens on.
  await sql`with o as (insert into outbox (id, exchange, routing_key, envelope) ${outboxSource(rows)} on conflict (id) do nothing)
    select ${PREPARED} ${NOTIFY_RELAY}`.execute(trx);
  return rows.map((r) => r.envelope);
}

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
 * A `select` of `(id, exchange, routing_key, envelope)` over outbox rows passed as one jsonb parameter, so
 * that the statement's text (and its prepared plan) is the same whatever their number.
 *
 * @example
 * sql`with o as (insert into outbox (id, exchange, routing_key, envelope) ${outboxSource(rows)}) select ...`
 */
export function outboxSource(rows: readonly OutboxRow[]) {
  return sql`select (m->'envelope'->>'id')::uuid as id, m->>'exchange' as exchange, m->'envelope'->>'type' as routing_key,
    m->'envelope' as envelope from jsonb_array_elements(${JSON.stringify(rows)}::jsonb) as m`;
}

/** `enqueue` for one event; `data` is checked against the catalog at compile time and at run time. */
export async function enqueueEvent<K extends EventKey>(
  trx: QueryExecutorProvider,
  type: K,
  teamId: string | null,
  data: MessageData<K>,
): Promise<MessageEnvelope> {
  const [envelope] = await enqueue(trx, [{ exchange: 'events', type, team_id: teamId, data } as OutboxMessage]);
  return envelope as MessageEnvelope;
}

/** `enqueue` for one command (`scheduler.set-timer`, ...). */
export async function enqueueCommand<K extends CommandKey>(
  trx: QueryExecutorProvider,
  type: K,
  teamId: string | null,
  data: MessageData<K>,
): Promise<MessageEnvelope> {
  const [envelope] = await enqueue(trx, [{ exchange: 'commands', type, team_id: teamId, data } as OutboxMessage]);
  return envelope as MessageEnvelope;
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
