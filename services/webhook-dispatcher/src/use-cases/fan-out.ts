// Every public event becomes one webhook event record per endpoint of its team that subscribes to its type.
// The first attempt of each is started before its record is written (see first-attempts.ts), while the
// event's message is still unacked. An endpoint disabled by its failures gets its record too, written failed
// (`endpoint_disabled`) with no attempt, so that replaying its failures once it is enabled recovers it.
import type { Kysely } from 'kysely';
import type { Message, PublicEventType } from '@postline/contracts';
import { createBatchLoader } from '@postline/platform';
import { fannedOutEndpoints } from '../db/endpoints.ts';
import type { DispatcherDb, EndpointRow } from '../db/schema.ts';
import { eventIdFor } from '../domain/ids.ts';
import type { NewRecord } from './attempt-records.ts';
import type { FirstAttempts } from './first-attempts.ts';

/**
 * How long a message waits for its first attempts before its records are written. An endpoint that answers
 * later gets its record written pending and its outcome recorded afterwards, so a slow endpoint holds a
 * message (one of the consumer's prefetch) this long at most.
 */
const FIRST_ATTEMPT_WAIT_MS = 250;

export type FanOutDeps = {
  db: Kysely<DispatcherDb>;
  firstAttempts: Pick<FirstAttempts, 'begin' | 'admit'>;
  firstAttemptWaitMs?: number;
};

/**
 * The records a public event makes, each with its first attempt under way (over, unless it is slow). A
 * redelivered message (requeued, or back from a retry tier) starts none: its records may exist already, with
 * attempts made; the records it writes pending get theirs once written.
 */
export type FanOut = (message: Message<PublicEventType>, redelivered: boolean) => Promise<NewRecord[]>;

export function createFanOut(deps: FanOutDeps): FanOut {
  const endpointsOf = createEndpointReader(deps.db);
  const waitMs = deps.firstAttemptWaitMs ?? FIRST_ATTEMPT_WAIT_MS;

  return async (message, redelivered) => {
    if (!message.team_id) return [];
    const type = message.type;
    const endpoints = (await endpointsOf(message.team_id)).filter((endpoint) => endpoint.events.includes(type));
    if (endpoints.length === 0) return [];
    // Waits while too many first attempts are under way in process; the message stays in the queue.
    if (endpoints.some((endpoint) => endpoint.status === 'enabled')) await deps.firstAttempts.admit();
    const body = JSON.stringify(webhookBody(message));
    const occurredAt = new Date(message.occurred_at);
    const records: NewRecord[] = endpoints.map((endpoint) => ({
      target: {
        event: {
          id: eventIdFor(endpoint.id, message.id, occurredAt),
          team_id: endpoint.team_id,
          endpoint_id: endpoint.id,
          source_event_id: message.id,
          type,
          body,
          status: endpoint.status === 'enabled' ? 'pending' : 'failed',
          attempts_made: 0,
        },
        endpoint,
      },
    }));
    if (redelivered) return records;
    const attempted = records.filter((record) => record.target.event.status === 'pending');
    if (attempted.length === 0) return records;
    for (const record of attempted) record.first = deps.firstAttempts.begin(record.target);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(attempted.map((record) => record.first!.outcome)),
      new Promise((resolve) => (timer = setTimeout(resolve, waitMs))),
    ]);
    clearTimeout(timer);
    return records;
  };
}

/**
 * The endpoints of a team that get its events (fannedOutEndpoints), read outside any transaction. The reads asked for in one turn of the
 * event loop (a burst's messages arrive many at a time) go as one query; while it runs, the next turn's
 * wait and go together.
 */
function createEndpointReader(db: Kysely<DispatcherDb>): (teamId: string) => Promise<EndpointRow[]> {
  return createBatchLoader({
    maxItems: 256,
    maxWaitMs: 0,
    maxConcurrent: 1,
    loadMany: async (teamIds: string[]) => {
      const endpointsByTeam = new Map<string, EndpointRow[]>();
      for (const endpoint of await fannedOutEndpoints(db, [...new Set(teamIds)])) {
        endpointsByTeam.set(endpoint.team_id, [...(endpointsByTeam.get(endpoint.team_id) ?? []), endpoint]);
      }
      return teamIds.map((teamId) => endpointsByTeam.get(teamId) ?? []);
    },
  });
}

/** The body every delivery carries: `{type, created_at, data}`, created_at the moment the event happened. */
function webhookBody(message: Message): { type: string; created_at: string; data: unknown } {
  return { type: message.type, created_at: new Date(message.occurred_at).toISOString(), data: message.data };
}
