// Every public event becomes one webhook event record per enabled endpoint of its team that subscribes
// to its type, each with its first delivery command, in the consumer's transaction.
import type { Kysely } from 'kysely';
import type { Message, PublicEventType } from '@postline/contracts';
import { createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import { subscribedEndpoints } from './db/endpoints.ts';
import { insertEvents } from './db/events.ts';
import type { DispatcherDb } from './db/schema.ts';
import { newEventId } from './domain/ids.ts';

/** The four families of public events; every key under them is public (internal events use `internal.`). */
const FAMILIES = ['email.*', 'contact.*', 'domain.*', 'suppression.*'] as const;

/**
 * The first attempt of each new record is made in process once the transaction has committed
 * (`deliverNow`), which saves a broker round trip per event; the first-attempt sweeper covers a crash
 * in between.
 */
export function createFanOutConsumer(deps: {
  db: Kysely<DispatcherDb>;
  broker: Broker;
  logger: Logger;
  deliverNow: (eventId: string, teamId: string) => void;
}): Consumer {
  return createConsumer({
    broker: deps.broker,
    db: deps.db,
    service: 'webhook-dispatcher',
    name: 'public-events',
    bindings: FAMILIES.map((routingKey) => ({ exchange: 'events' as const, routingKey })),
    prefetch: 32,
    logger: deps.logger,
    handle: async (message, trx) => {
      if (!message.team_id) return;
      const type: PublicEventType = message.type;
      const endpoints = await subscribedEndpoints(trx, message.team_id, type);
      const body = JSON.stringify(webhookBody(message));
      const created = await insertEvents(
        trx,
        endpoints.map((endpoint) => ({
          id: newEventId(),
          endpoint_id: endpoint.id,
          team_id: endpoint.team_id,
          source_event_id: message.id,
          type,
          body,
          status: 'pending' as const,
          next_attempt_at: new Date(),
        })),
      );
      return () => {
        for (const event of created) deps.deliverNow(event.id, event.team_id);
      };
    },
  });
}

/** The body every delivery carries: `{type, created_at, data}`, created_at the moment the event happened. */
function webhookBody(message: Message): { type: string; created_at: string; data: unknown } {
  return { type: message.type, created_at: new Date(message.occurred_at).toISOString(), data: message.data };
}
