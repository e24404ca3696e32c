// Every public event becomes one webhook event record per enabled endpoint of its team that subscribes
// to its type, in the consumer's transaction. Events are handled in batches: one transaction, one read of
// the teams' endpoints and one multi-row insert for up to 64 broker messages.
import type { Kysely, Transaction } from 'kysely';
import type { Message, PublicEventType } from '@postline/contracts';
import { createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import { enabledEndpoints } from './db/endpoints.ts';
import { insertEvents } from './db/events.ts';
import type { DispatcherDb, EndpointRow } from './db/schema.ts';
import type { Target } from './deliver.ts';
import { newEventId } from './domain/ids.ts';

/** The four families of public events; every key under them is public (internal events use `internal.`). */
const FAMILIES = ['email.*', 'contact.*', 'domain.*', 'suppression.*'] as const;

type PublicMessage = Message<PublicEventType>;

/**
 * The first attempt of each new record is made in process once the transaction has committed
 * (`deliverNow`), which saves a broker round trip per event; the first-attempt sweeper covers a crash
 * in between.
 */
export function createFanOutConsumer(deps: {
  db: Kysely<DispatcherDb>;
  broker: Broker;
  logger: Logger;
  deliverNow: (target: Target) => void;
  /** Waits while too many first attempts are under way in process; the message stays in the queue. */
  admit: () => Promise<void>;
}): Consumer {
  const fanOut = async (trx: Transaction<DispatcherDb>, messages: PublicMessage[]) => {
    const targets = await createRecords(trx, messages);
    return () => {
      for (const target of targets) deps.deliverNow(target);
    };
  };
  return createConsumer({
    broker: deps.broker,
    db: deps.db,
    service: 'webhook-dispatcher',
    name: 'public-events',
    bindings: FAMILIES.map((routingKey) => ({ exchange: 'events' as const, routingKey })),
    prefetch: 256,
    logger: deps.logger,
    prepare: () => deps.admit(),
    // A redelivered event creates nothing: records are unique per (endpoint, source event).
    inbox: false,
    handle: (message, trx) => fanOut(trx, [message]),
    // A message goes at once when no batch is committing; under load, what arrives meanwhile goes together.
    batch: { maxMessages: 64, maxWaitMs: 0, maxConcurrent: 2, handle: (items, trx) => fanOut(trx, items.map((i) => i.message)) },
  });
}

/** The new records of these events (none for a redelivered one), each with what its first attempt needs. */
async function createRecords(trx: Transaction<DispatcherDb>, messages: PublicMessage[]): Promise<Target[]> {
  const teamIds = [...new Set(messages.flatMap((m) => (m.team_id ? [m.team_id] : [])))];
  const byTeam = new Map<string, EndpointRow[]>();
  for (const endpoint of await enabledEndpoints(trx, teamIds)) {
    byTeam.set(endpoint.team_id, [...(byTeam.get(endpoint.team_id) ?? []), endpoint]);
  }
  const rows = messages.flatMap((message) => {
    if (!message.team_id) return [];
    const type = message.type;
    const subscribed = (byTeam.get(message.team_id) ?? []).filter((endpoint) => endpoint.events.includes(type));
    // An event no endpoint subscribes to (a team without webhooks) needs no body.
    if (subscribed.length === 0) return [];
    const body = JSON.stringify(webhookBody(message));
    return subscribed.map((endpoint) => ({
      id: newEventId(),
      endpoint_id: endpoint.id,
      team_id: endpoint.team_id,
      source_event_id: message.id,
      type,
      body,
      status: 'pending' as const,
      next_attempt_at: new Date(),
    }));
  });
  const endpoints = new Map([...byTeam.values()].flat().map((e) => [e.id, e]));
  const byId = new Map(rows.map((row) => [row.id, row]));
  return (await insertEvents(trx, rows)).flatMap((id) => {
    const event = byId.get(id);
    const endpoint = event && endpoints.get(event.endpoint_id);
    if (!event || !endpoint) return [];
    return [
      {
        id,
        team_id: event.team_id,
        endpoint_id: event.endpoint_id,
        body: event.body,
        status: event.status,
        attempts_made: 0,
        endpoint: endpoint.endpoint,
        endpoint_status: endpoint.status,
        secret_encrypted: endpoint.secret_encrypted,
        previous_secret_encrypted: endpoint.previous_secret_encrypted,
        previous_secret_expires_at: endpoint.previous_secret_expires_at,
        failing_since: endpoint.failing_since,
      },
    ];
  });
}

/** The body every delivery carries: `{type, created_at, data}`, created_at the moment the event happened. */
function webhookBody(message: Message): { type: string; created_at: string; data: unknown } {
  return { type: message.type, created_at: new Date(message.occurred_at).toISOString(), data: message.data };
}
