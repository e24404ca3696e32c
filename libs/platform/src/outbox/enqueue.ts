import { sql, type QueryExecutorProvider } from 'kysely';
import type { MessageData, MessageEnvelope } from '@postline/contracts';
import { PREPARED } from '../db/db.ts';
import { NOTIFY_RELAY } from './tables.ts';
import { outboxRows, type CommandKey, type EventKey, type OutboxMessage, type OutboxRow } from './messages.ts';

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
