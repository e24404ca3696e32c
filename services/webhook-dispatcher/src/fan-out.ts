// Every public event becomes one webhook event record per enabled endpoint of its team that subscribes
// to its type. The first attempt of each is made before its record is written, while the event's message
// is still unacked: a record whose attempt is over by then is written once, settled and with its attempt,
// instead of inserted and then updated. Messages are handled in batches: one transaction and one
// multi-row insert for up to 128 of them.
import type { Kysely } from 'kysely';
import type { Message, PublicEventType } from '@postline/contracts';
import { createBatchLoader, createConsumer, type Broker, type Consumer, type Logger } from '@postline/platform';
import { enabledEndpoints } from './db/endpoints.ts';
import type { DispatcherDb, EndpointRow } from './db/schema.ts';
import type { Deliveries, NewRecord } from './deliver.ts';
import { eventIdFor } from './domain/ids.ts';

/** The four families of public events; every key under them is public (internal events use `internal.`). */
const FAMILIES = ['email.*', 'contact.*', 'domain.*', 'suppression.*'] as const;

/**
 * How long a message waits for its first attempts before its records are written. An endpoint that
 * answers later gets its record written pending and its outcome recorded afterwards, so a slow endpoint
 * holds a message (one of `prefetch`) this long at most.
 */
const FIRST_ATTEMPT_WAIT_MS = 250;

type PublicMessage = Message<PublicEventType>;

export function createFanOutConsumer(deps: {
  db: Kysely<DispatcherDb>;
  broker: Broker;
  logger: Logger;
  deliveries: Pick<Deliveries, 'begin' | 'writeRecords' | 'discard' | 'admit'>;
  firstAttemptWaitMs?: number;
}): Consumer {
  const endpointsOf = createEndpointReader(deps.db);
  const waitMs = deps.firstAttemptWaitMs ?? FIRST_ATTEMPT_WAIT_MS;

  /**
   * The records a message makes, each with its first attempt under way (over, unless it is slow). A
   * redelivered message (requeued, or back from a retry tier) starts none: its records may exist already,
   * with attempts made; the records it writes pending get theirs once written.
   */
  async function prepare(message: PublicMessage, redelivered: boolean): Promise<NewRecord[]> {
    if (!message.team_id) return [];
    const type = message.type;
    const endpoints = (await endpointsOf(message.team_id)).filter((endpoint) => endpoint.events.includes(type));
    if (endpoints.length === 0) return [];
    // Waits while too many first attempts are under way in process; the message stays in the queue.
    await deps.deliveries.admit();
    const body = JSON.stringify(webhookBody(message));
    const occurredAt = new Date(message.occurred_at);
    const records: NewRecord[] = endpoints.map((endpoint) => ({
      target: {
        id: eventIdFor(endpoint.id, message.id, occurredAt),
        team_id: endpoint.team_id,
        endpoint_id: endpoint.id,
        source_event_id: message.id,
        type,
        body,
        status: 'pending',
        attempts_made: 0,
        endpoint: endpoint.endpoint,
        endpoint_status: endpoint.status,
        secret_encrypted: endpoint.secret_encrypted,
        previous_secret_encrypted: endpoint.previous_secret_encrypted,
        previous_secret_expires_at: endpoint.previous_secret_expires_at,
        failing_since: endpoint.failing_since,
      },
    }));
    if (redelivered) return records;
    for (const record of records) record.first = deps.deliveries.begin(record.target);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(records.map((r) => r.first!.outcome)),
      new Promise((resolve) => (timer = setTimeout(resolve, waitMs))),
    ]);
    clearTimeout(timer);
    return records;
  }

  return createConsumer({
    broker: deps.broker,
    db: deps.db,
    service: 'webhook-dispatcher',
    name: 'public-events',
    bindings: FAMILIES.map((routingKey) => ({ exchange: 'events' as const, routingKey })),
    // A message is held from its first attempt until its batch commits (the POST, up to 25 ms of waiting,
    // the transaction), so the prefetch bounds the rate: 256 with batches of 64 capped a burst to one
    // endpoint at about 6,000 events/s, with two batches committing and the next 128 waiting.
    prefetch: 512,
    logger: deps.logger,
    // Leaves most of the shutdown budget (SHUTDOWN_TIMEOUT_MS, 10 s) to the in-process attempts that follow;
    // what is still being prepared then is requeued and comes back marked redelivered.
    stopTimeoutMs: 4_000,
    prepare: (message, { redelivered }) => prepare(message, redelivered),
    discard: (records) => deps.deliveries.discard(records),
    // A redelivered event creates nothing: records are unique per (endpoint, source event).
    inbox: false,
    handle: (_message, trx, records) => deps.deliveries.writeRecords(trx, records),
    // Messages become ready one at a time, as their endpoints answer; a message waits up to 25 ms for
    // others (its deliveries are made already, only its record and ack wait), and batches hold far more.
    batch: { maxMessages: 128, maxWaitMs: 25, maxConcurrent: 2, handle: (items, trx) => deps.deliveries.writeRecords(trx, items.flatMap((i) => i.prepared)) },
  });
}

/**
 * The enabled endpoints of a team, read outside any transaction. The reads asked for in one turn of the
 * event loop (a burst's messages arrive many at a time) go as one query; while it runs, the next turn's
 * wait and go together.
 */
function createEndpointReader(db: Kysely<DispatcherDb>): (teamId: string) => Promise<EndpointRow[]> {
  return createBatchLoader({
    maxItems: 256,
    maxWaitMs: 0,
    maxConcurrent: 1,
    loadMany: async (teamIds: string[]) => {
      const byTeam = new Map<string, EndpointRow[]>();
      for (const endpoint of await enabledEndpoints(db, [...new Set(teamIds)])) {
        byTeam.set(endpoint.team_id, [...(byTeam.get(endpoint.team_id) ?? []), endpoint]);
      }
      return teamIds.map((teamId) => byTeam.get(teamId) ?? []);
    },
  });
}

/** The body every delivery carries: `{type, created_at, data}`, created_at the moment the event happened. */
function webhookBody(message: Message): { type: string; created_at: string; data: unknown } {
  return { type: message.type, created_at: new Date(message.occurred_at).toISOString(), data: message.data };
}
